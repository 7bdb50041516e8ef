//===- CpuBackend.cpp - models compiled for the host CPU ------------------===//

#include "Backend.h"
#include "TensorChecks.h"
#include "recur/runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

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

class CpuBackend : public Backend {
public:
  explicit CpuBackend(void *library)
      : failedAllocation(reinterpret_cast<int64_t (*)()>(
            dlsym(library, RECUR_MODEL_FAILED_ALLOCATION_SYMBOL))) {}

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
  std::unique_ptr<Buffer> copyHostWeight(const void *data, size_t bytes,
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
    entry(arguments);
    // The run returned early with its results unset; buffers it had
    // allocated before are lost (the generated code does not track them).
    if (int64_t bytes = failedAllocation ? failedAllocation() : 0)
      throw Failure("out of memory: the model could not allocate " +
                    std::to_string(bytes) + " bytes for this run");
  }

  bool failedRunsSetResults() const override { return false; }

  OutputBuffer takeOutput(void *allocated, void *data, size_t bytes,
                          bool owned, const std::string &what) const override {
    if (owned)
      return {allocated, data, false, true};
    void *copy = std::malloc(bytes ? bytes : 1);
    if (!copy)
      throw Failure("out of memory copying " + what + " (" +
                    std::to_string(bytes) + " bytes)");
    if (bytes)
      std::memcpy(copy, data, bytes);
    return {copy, copy, false, false};
  }

  void freeResult(void *allocated) const override { std::free(allocated); }

  void setHostOutputs(bool) override {} // always host tensors
  DLDevice outputDevice(bool) const override { return {kDLCPU, 0}; }

private:
  std::string name = "cpu";
  int64_t (*failedAllocation)() = nullptr;
};

} // namespace

std::unique_ptr<Backend> recur::runtime::createCpuBackend(void *library,
                                                          size_t) {
  return std::make_unique<CpuBackend>(library);
}
