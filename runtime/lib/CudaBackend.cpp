//===- CudaBackend.cpp - models compiled for NVIDIA GPUs ------------------===//
//
// Weights live on the device from bind time; host inputs are uploaded into
// buffers kept between runs; everything runs on the model's one stream
// (Cuda.h).
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Cuda.h"
#include "HostHeap.h"
#include "TensorChecks.h"

#include <cstdlib>

using namespace recur::runtime;
namespace cuda = recur::cuda;

namespace {

class DeviceWeight : public Buffer {
public:
  explicit DeviceWeight(cuda::DeviceBuffer buffer)
      : buffer(std::move(buffer)) {}
  void *data() const override { return buffer.data(); }

private:
  cuda::DeviceBuffer buffer;
};

class CudaBackend : public Backend {
public:
  CudaBackend(std::unique_ptr<cuda::ModelGpu> gpu, size_t numInputs)
      : gpu(std::move(gpu)), inputBuffers(numInputs) {}

  const std::string &deviceName() const override { return gpu->deviceName(); }

  void checkDevice(const std::string &what,
                   const DLTensor &tensor) const override {
    if (isHostMemory(tensor))
      return;
    int type = tensor.device.device_type;
    if (type != kDLCUDA && type != kDLCUDAManaged)
      throw Failure(what + " is in " + deviceTypeName(type) +
                    " memory; a CUDA model takes host or CUDA tensors");
    if (tensor.device.device_id != gpu->deviceOrdinal())
      throw Failure(what + " is on CUDA device " +
                    std::to_string(tensor.device.device_id) +
                    "; the model runs on " + gpu->deviceName());
  }

  std::unique_ptr<Buffer> copyWeight(const DLTensor &tensor, const void *data,
                                     size_t bytes,
                                     const std::string &what) const override {
    if (isHostMemory(tensor))
      return copyHostWeight(data, bytes, what);
    cuda::DeviceBuffer buffer(bytes, what);
    gpu->copyOnDevice(buffer.data(), data, bytes);
    return std::make_unique<DeviceWeight>(std::move(buffer));
  }
  std::unique_ptr<Buffer>
  copyHostWeight(const void *data, size_t bytes,
                 const std::string &what) const override {
    cuda::DeviceBuffer buffer(bytes, what);
    gpu->copyToDevice(buffer.data(), data, bytes);
    return std::make_unique<DeviceWeight>(std::move(buffer));
  }

  void readToHost(const DLTensor &, const void *data, size_t bytes,
                  void *host) const override {
    gpu->copyToHost(host, data, bytes);
  }

  const void *stageInput(size_t index, const DLTensor &tensor, const void *data,
                         size_t bytes, const std::string &what) override {
    if (!isHostMemory(tensor))
      return data;
    cuda::DeviceBuffer &buffer = inputBuffers[index];
    if (buffer.size() < bytes)
      buffer = cuda::DeviceBuffer(bytes, what);
    gpu->copyToDeviceAsync(buffer.data(), data, bytes);
    return buffer.data();
  }

  std::unique_lock<std::mutex> lockRun() override {
    return std::unique_lock<std::mutex>(runMutex);
  }

  void run(void (*entry)(void **), void **arguments) override {
    gpu->run(entry, arguments);
  }

  const std::string &runReport() const override { return gpu->runReport(); }

  bool failedRunsSetResults() const override { return true; }

  OutputBuffer takeOutput(void *allocated, void *data, size_t bytes, bool owned,
                          const std::string &what) const override {
    if (hostOutputs) {
      // A malloc'd copy, the kind of buffer a CPU model returns.
      void *host = std::malloc(bytes ? bytes : 1);
      if (!host)
        throw Failure("out of host memory copying " + what + " (" +
                      std::to_string(bytes) + " bytes)");
      try {
        gpu->copyToHost(host, data, bytes);
      } catch (...) {
        std::free(host);
        throw;
      }
      return {host, host, {kDLCPU, 0}, hostFreeBuffer, false};
    }
    if (owned)
      return {allocated, data, device(), cuda::ModelGpu::freeModelAllocation,
              true};
    void *copy = gpu->duplicate(data, bytes, what);
    return {copy, copy, device(), cuda::ModelGpu::freeModelAllocation, false};
  }

  void freeResult(void *allocated) const override {
    cuda::ModelGpu::freeModelAllocation(allocated);
  }

  void setHostOutputs(bool host) override { hostOutputs = host; }
  DLDevice device() const override { return {kDLCUDA, gpu->deviceOrdinal()}; }

private:
  std::unique_ptr<cuda::ModelGpu> gpu;
  std::vector<cuda::DeviceBuffer> inputBuffers; // per input, kept between runs
  bool hostOutputs = false;
  /// The stream, its error state and the input buffers serve one run at a
  /// time.
  std::mutex runMutex;
};

} // namespace

std::unique_ptr<Backend>
recur::runtime::createCudaBackend(void *library, const std::string &path,
                                  const std::string &cudaArch,
                                  size_t numInputs) {
  return std::make_unique<CudaBackend>(
      cuda::ModelGpu::load(library, path, cudaArch), numInputs);
}
