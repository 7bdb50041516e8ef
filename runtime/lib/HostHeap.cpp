//===- HostHeap.cpp - host buffers of compiled models ---------------------===//

#include "HostHeap.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

using namespace recur::runtime;

namespace {

/// Smaller buffers come from malloc's own free lists; larger ones are mapped
/// afresh by glibc in every run.
constexpr size_t kLargeBytes = size_t(1) << 20;
/// What the heap keeps at most; a freed buffer that would exceed it is given
/// back.
constexpr size_t kMaxKeptBytes = size_t(1) << 30;
/// Every large buffer is aligned to a cache line (and to what malloc gives).
constexpr size_t kLargeAlignment = 64;

struct Heap {
  std::mutex mutex;
  std::unordered_map<void *, size_t> largeSizes; // live and kept
  std::vector<std::pair<void *, size_t>> kept;
  size_t keptBytes = 0;

  ~Heap() { release(); }

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto [pointer, bytes] : kept) {
      largeSizes.erase(pointer);
      std::free(pointer);
    }
    kept.clear();
    keptBytes = 0;
  }
};

Heap &heap() {
  static Heap instance;
  return instance;
}

} // namespace

void *recur::runtime::hostAllocate(size_t bytes, size_t alignment) noexcept {
  if (bytes < kLargeBytes || alignment > kLargeAlignment)
    return alignment <= alignof(std::max_align_t)
               ? std::malloc(bytes)
               : std::aligned_alloc(alignment, (bytes + alignment - 1) /
                                                   alignment * alignment);
  Heap &state = heap();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    // The smallest kept buffer that fits without wasting more than half.
    auto best = state.kept.end();
    for (auto it = state.kept.begin(); it != state.kept.end(); ++it)
      if (it->second >= bytes && it->second <= 2 * bytes &&
          (best == state.kept.end() || it->second < best->second))
        best = it;
    if (best != state.kept.end()) {
      void *pointer = best->first;
      state.keptBytes -= best->second;
      state.kept.erase(best);
      return pointer;
    }
  }
  size_t rounded =
      (bytes + kLargeAlignment - 1) / kLargeAlignment * kLargeAlignment;
  void *pointer = std::aligned_alloc(kLargeAlignment, rounded);
  if (!pointer) {
    // What is kept must not make an allocation fail.
    state.release();
    pointer = std::aligned_alloc(kLargeAlignment, rounded);
  }
  if (!pointer)
    return nullptr;
  try {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.largeSizes.emplace(pointer, rounded);
  } catch (const std::bad_alloc &) {
    std::free(pointer);
    return nullptr;
  }
  return pointer;
}

void recur::runtime::hostFree(void *pointer, bool keep) noexcept {
  if (!pointer)
    return;
  Heap &state = heap();
  std::unique_lock<std::mutex> lock(state.mutex);
  auto found = state.largeSizes.find(pointer);
  if (found == state.largeSizes.end()) {
    lock.unlock();
    std::free(pointer);
    return;
  }
  size_t bytes = found->second;
  if (keep && state.keptBytes + bytes <= kMaxKeptBytes) {
    try {
      state.kept.emplace_back(pointer, bytes);
      state.keptBytes += bytes;
      return;
    } catch (const std::bad_alloc &) {
    }
  }
  state.largeSizes.erase(found);
  lock.unlock();
  std::free(pointer);
}

void recur::runtime::releaseHostCache() noexcept { heap().release(); }

size_t recur::runtime::hostCacheBytes() noexcept {
  Heap &state = heap();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.keptBytes;
}
