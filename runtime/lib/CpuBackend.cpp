//===- CpuBackend.cpp - models compiled for the host CPU ------------------===//

#include "Backend.h"
#include "HostHeap.h"
#include "TensorChecks.h"
#include "recur/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

using namespace recur::runtime;

namespace {

/// A 64-byte aligned copy of a weight.
class AlignedBuffer : public Buffer {
public:
  AlignedBuffer(const void *source, size_t bytes, const std::string &what) {
    pointer = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!pointer)
      throw Failure("out of memory allocating " + std::to_string(bytes) +
                    " bytes for " + what);
    if (bytes)
      std::memcpy(pointer, source, bytes);
  }
  ~AlignedBuffer() override { std::free(pointer); }
  void *data() const override { return pointer; }

private:
  void *pointer = nullptr;
};

/// The buffers the generated code allocated in the calling thread's current
/// run and has not freed yet; null outside runs (the weight prologue and the
/// run allocate and free on the calling thread only: recur-compile refuses
/// heap calls elsewhere).
thread_local std::vector<void *> *liveBuffers = nullptr;

/// Records `pointer` as live; a buffer that cannot be recorded is given
/// back and its allocation fails (no exception may cross generated code).
void *track(void *pointer) noexcept {
  if (!pointer || !liveBuffers)
    return pointer;
  try {
    liveBuffers->push_back(pointer);
  } catch (const std::bad_alloc &) {
    hostFree(pointer);
    return nullptr;
  }
  return pointer;
}

void *trackedMalloc(size_t bytes) noexcept {
  return track(hostAllocate(bytes, alignof(std::max_align_t)));
}

void *trackedAlignedAlloc(size_t alignment, size_t bytes) noexcept {
  return track(hostAllocate(bytes, alignment));
}

void trackedFree(void *pointer) noexcept {
  if (pointer && liveBuffers) {
    // Buffers die roughly in reverse order of birth: search from the back.
    auto found = std::find(liveBuffers->rbegin(), liveBuffers->rend(), pointer);
    if (found != liveBuffers->rend())
      liveBuffers->erase(std::next(found).base());
  }
  hostFree(pointer);
}

class CpuBackend : public Backend {
public:
  explicit CpuBackend(void *library)
      : failedAllocation(reinterpret_cast<int64_t (*)()>(
            dlsym(library, RECUR_MODEL_FAILED_ALLOCATION_SYMBOL))) {
    using SetHeap = void (*)(void *(*)(size_t), void *(*)(size_t, size_t),
                             void (*)(void *));
    if (auto setHeap = reinterpret_cast<SetHeap>(
            dlsym(library, RECUR_MODEL_SET_HEAP_SYMBOL))) {
      setHeap(trackedMalloc, trackedAlignedAlloc, trackedFree);
      tracked = true;
    }
  }

  const std::string &deviceName() const override { return name; }

  void checkDevice(const std::string &what,
                   const DLTensor &tensor) const override {
    if (!isHostMemory(tensor))
      throw Failure(what + " is in " +
                    deviceTypeName(tensor.device.device_type) +
                    " memory; this model runs on the CPU and needs host "
                    "memory");
  }

  std::unique_ptr<Buffer> copyWeight(const DLTensor &, const void *data,
                                     size_t bytes,
                                     const std::string &what) const override {
    return copyHostWeight(data, bytes, what);
  }
  std::unique_ptr<Buffer>
  copyHostWeight(const void *data, size_t bytes,
                 const std::string &what) const override {
    return std::make_unique<AlignedBuffer>(data, bytes, what);
  }

  void readToHost(const DLTensor &, const void *data, size_t bytes,
                  void *host) const override {
    std::memcpy(host, data, bytes);
  }

  const void *stageInput(size_t, const DLTensor &, const void *data, size_t,
                         const std::string &) override {
    return data;
  }

  // Runs of a CPU model share nothing but the weights, which they only read.
  std::unique_lock<std::mutex> lockRun() override { return {}; }

  void run(void (*entry)(void **), void **arguments) override {
    std::vector<void *> live;
    if (tracked)
      liveBuffers = &live;
    entry(arguments);
    liveBuffers = nullptr;
    // The run returned early with its results unset: the buffers it still
    // held are nobody's. After a successful run they are its results, which
    // the caller owns.
    if (int64_t bytes = failedAllocation ? failedAllocation() : 0) {
      // Memory is short: what the run held and what the heap keeps go back.
      for (void *buffer : live)
        hostFree(buffer, /*keep=*/false);
      releaseHostCache();
      throw Failure("out of memory: the model could not allocate " +
                    std::to_string(bytes) + " bytes for this run");
    }
  }

  bool failedRunsSetResults() const override { return false; }

  OutputBuffer takeOutput(void *allocated, void *data, size_t bytes, bool owned,
                          const std::string &what) const override {
    if (owned)
      return {allocated, data, device(), hostFreeBuffer, true};
    void *copy = hostAllocate(bytes ? bytes : 1, alignof(std::max_align_t));
    if (!copy)
      throw Failure("out of memory copying " + what + " (" +
                    std::to_string(bytes) + " bytes)");
    if (bytes)
      std::memcpy(copy, data, bytes);
    return {copy, copy, device(), hostFreeBuffer, false};
  }

  void freeResult(void *allocated) const override { hostFree(allocated); }

  void setHostOutputs(bool) override {} // always host tensors
  DLDevice device() const override { return {kDLCPU, 0}; }

private:
  std::string name = "cpu";
  int64_t (*failedAllocation)() = nullptr;
  bool tracked = false; // the model allocates through the tracking functions
};

} // namespace

std::unique_ptr<Backend> recur::runtime::createCpuBackend(void *library,
                                                          size_t) {
  return std::make_unique<CpuBackend>(library);
}
