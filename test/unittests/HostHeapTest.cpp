//===- HostHeapTest.cpp - reuse of large host buffers ---------------------===//

#include "HostHeap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace recur::runtime;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

class HostHeapTest : public ::testing::Test {
protected:
  void SetUp() override { releaseHostCache(); }
  void TearDown() override { releaseHostCache(); }
};

TEST_F(HostHeapTest, ALargeBufferIsReusedByTheNextRunOfTheSameSize) {
  void *first = hostAllocate(8 * kMiB, 64);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 1, 8 * kMiB);
  hostFree(first);
  EXPECT_EQ(hostCacheBytes(), 8 * kMiB);
  void *second = hostAllocate(8 * kMiB, 64);
  EXPECT_EQ(second, first);
  EXPECT_EQ(hostCacheBytes(), 0u);
  hostFree(second, /*keep=*/false);
  EXPECT_EQ(hostCacheBytes(), 0u);
}

TEST_F(HostHeapTest, AKeptBufferServesOnlySizesItFitsWithoutWastingHalf) {
  void *big = hostAllocate(8 * kMiB, 16);
  hostFree(big);
  // Larger than the kept buffer, or less than half of it: a new buffer.
  void *larger = hostAllocate(9 * kMiB, 16);
  void *smaller = hostAllocate(3 * kMiB, 16);
  EXPECT_NE(larger, big);
  EXPECT_NE(smaller, big);
  EXPECT_EQ(hostCacheBytes(), 8 * kMiB);
  // Within [bytes, 2 * bytes]: the kept one.
  void *fits = hostAllocate(5 * kMiB, 16);
  EXPECT_EQ(fits, big);
  for (void *pointer : {larger, smaller, fits})
    hostFree(pointer, /*keep=*/false);
}

TEST_F(HostHeapTest, SmallBuffersAndForeignPointersAreNotKept) {
  void *small = hostAllocate(1000, 16);
  ASSERT_NE(small, nullptr);
  hostFree(small);
  void *aligned = hostAllocate(1000, 128);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 128, 0u);
  hostFree(aligned);
  // What malloc gave (a model built without the heap hooks) is freed.
  hostFree(std::malloc(4 * kMiB));
  hostFree(nullptr);
  EXPECT_EQ(hostCacheBytes(), 0u);
}

TEST_F(HostHeapTest, WhatIsKeptIsBounded) {
  // 1 GiB at most: the third 400 MiB buffer goes back to the system.
  void *buffers[3];
  for (void *&buffer : buffers) {
    buffer = hostAllocate(400 * kMiB, 64);
    ASSERT_NE(buffer, nullptr);
  }
  for (void *buffer : buffers)
    hostFree(buffer);
  EXPECT_EQ(hostCacheBytes(), 800 * kMiB);
  releaseHostCache();
  EXPECT_EQ(hostCacheBytes(), 0u);
}

} // namespace
