//===- Cuda.h - the runtime's CUDA backend ----------------------*- C++ -*-===//
//
// The CUDA driver is loaded with dlopen on first use, so librecur-runtime
// builds, loads and runs CPU models where there is no driver. A CUDA model's
// host code calls `mgpu*` functions (the names and signatures of MLIR's
// CudaRuntimeWrappers.cpp); the runtime hands its own implementations to the
// model at load time (RECUR_MODEL_BIND_GPU_SYMBOL), bound to the model's one
// stream. Errors are thrown as std::runtime_error with a message for the user.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_CUDA_H
#define RECUR_RUNTIME_CUDA_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace recur::cuda {

/// Device memory owned by the runtime (weights, uploaded inputs).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes, const std::string &what);
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  ~DeviceBuffer();
  void *data() const { return reinterpret_cast<void *>(pointer); }
  size_t size() const { return bytes; }

private:
  uint64_t pointer = 0;
  size_t bytes = 0;
};

/// The GPU side of one loaded CUDA model: its device, stream and kernels.
class ModelGpu {
public:
  /// Checks driver, device and architecture (`cudaArch`, e.g. "sm_90"), binds
  /// the model's mgpu* calls and loads its kernels.
  static std::unique_ptr<ModelGpu> load(void *libraryHandle,
                                        const std::string &path,
                                        const std::string &cudaArch);
  ~ModelGpu();

  /// "NVIDIA H100 80GB HBM3 (sm_90), device 0".
  const std::string &deviceName() const;
  int deviceOrdinal() const;

  /// Copies host memory to the device (synchronously, for weights).
  void copyToDevice(void *device, const void *host, size_t bytes) const;
  /// Copies device memory to the host, after the stream's work.
  void copyToHost(void *host, const void *device, size_t bytes) const;
  void copyOnDevice(void *destination, const void *source, size_t bytes) const;
  /// Stream-ordered host-to-device copy for a run's inputs.
  void copyToDeviceAsync(void *device, const void *host, size_t bytes) const;

  /// Runs `entry` (the model's compiled entry point) with this model's stream
  /// as the one its mgpu* calls use, waits for the GPU work, and throws the
  /// first error any of those calls met.
  void run(void (*entry)(void **), void **arguments);
  /// How the last run executed: its kernel launches, and each persistent
  /// kernel's cooperative launch with the grid that fit on the device.
  const std::string &runReport() const;

  /// A copy of `bytes` of device memory in a new allocation of the kind the
  /// model makes, so that freeModelAllocation releases it. `what` names it
  /// in errors.
  void *duplicate(const void *source, size_t bytes, const std::string &what);

  /// Frees memory the model allocated (outputs handed to the caller).
  static void freeModelAllocation(void *pointer);

  struct State;

private:
  explicit ModelGpu(std::unique_ptr<State> state);
  std::unique_ptr<State> state;
};

/// Whether this process can run CUDA models; if not, `reason` says why.
bool available(std::string &reason);

} // namespace recur::cuda

#endif // RECUR_RUNTIME_CUDA_H
