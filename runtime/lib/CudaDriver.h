//===- CudaDriver.h - the CUDA driver API, loaded on first use --*- C++ -*-===//
//
// The driver functions the runtime calls, resolved with dlsym from
// libcuda.so.1 on first use (cuda.h is not needed to build the runtime), and
// the device the process runs its CUDA models on (RECUR_CUDA_DEVICE).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_CUDADRIVER_H
#define RECUR_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace recur::cuda {

// The few driver API types and constants used here (cuda.h is not needed to
// build the runtime).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUmemoryPool = void *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
// Faults of a running kernel (illegal or misaligned address, trap, assert,
// illegal instruction, ...): 700 to 719. They are reported by whatever
// driver call comes after the kernel ran, and the context stays unusable.
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95;
constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
// A blocking stream waits for work on the legacy default stream, where weight
// uploads run and where PyTorch produces tensors by default.
constexpr unsigned CU_STREAM_DEFAULT = 0;
const CUstream CU_STREAM_LEGACY = reinterpret_cast<CUstream>(0x1);

struct Driver {
  std::string unavailable; // why CUDA cannot be used; empty if it can
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int capability = 0; // e.g. 90 for sm_90
  int multiprocessors = 0;
  bool cooperativeLaunch = false;
  std::string deviceName;

#define RECUR_CUDA_FUNCTIONS(X)                                                \
  X(cuInit, unsigned)                                                          \
  X(cuGetErrorName, CUresult, const char **)                                   \
  X(cuGetErrorString, CUresult, const char **)                                 \
  X(cuDeviceGetCount, int *)                                                   \
  X(cuDeviceGet, CUdevice *, int)                                              \
  X(cuDeviceGetName, char *, int, CUdevice)                                    \
  X(cuDeviceGetAttribute, int *, int, CUdevice)                                \
  X(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice)                           \
  X(cuDeviceGetDefaultMemPool, CUmemoryPool *, CUdevice)                       \
  X(cuMemPoolSetAttribute, CUmemoryPool, int, void *)                          \
  X(cuCtxSetCurrent, CUcontext)                                                \
  X(cuModuleLoadData, CUmodule *, const void *)                                \
  X(cuModuleUnload, CUmodule)                                                  \
  X(cuModuleGetFunction, CUfunction *, CUmodule, const char *)                 \
  X(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned,        \
    unsigned, unsigned, unsigned, CUstream, void **, void **)                  \
  X(cuLaunchCooperativeKernel, CUfunction, unsigned, unsigned, unsigned,       \
    unsigned, unsigned, unsigned, unsigned, CUstream, void **)                 \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, int *, CUfunction, int,       \
    size_t)                                                                    \
  X(cuStreamCreate, CUstream *, unsigned)                                      \
  X(cuStreamDestroy_v2, CUstream)                                              \
  X(cuStreamSynchronize, CUstream)                                             \
  X(cuMemGetInfo_v2, size_t *, size_t *)                                       \
  X(cuMemAlloc_v2, CUdeviceptr *, size_t)                                      \
  X(cuMemFree_v2, CUdeviceptr)                                                 \
  X(cuMemAllocAsync, CUdeviceptr *, size_t, CUstream)                          \
  X(cuMemFreeAsync, CUdeviceptr, CUstream)                                     \
  X(cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t)                        \
  X(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t)                              \
  X(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, size_t)                         \
  X(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t, CUstream)         \
  X(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, CUstream)
#define RECUR_DECLARE(name, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
  RECUR_CUDA_FUNCTIONS(RECUR_DECLARE)
#undef RECUR_DECLARE

  /// What a kernel fault means for the reader, who would otherwise blame
  /// the call that happened to report it.
  static std::string kernelFaultNote(CUresult result) {
    if (result < CUDA_ERROR_ILLEGAL_ADDRESS ||
        result > CUDA_ERROR_LAUNCH_FAILED)
      return "";
    return "; a kernel launched before this call faulted (kernels run "
           "asynchronously, so a later driver call reports it, and the GPU "
           "context is unusable from here): run under compute-sanitizer to "
           "find the kernel";
  }

  std::string describe(CUresult result) const {
    const char *errorName = nullptr, *text = nullptr;
    if (cuGetErrorName)
      cuGetErrorName(result, &errorName);
    if (cuGetErrorString)
      cuGetErrorString(result, &text);
    return std::string(errorName ? errorName
                                 : "CUDA error " + std::to_string(result)) +
           (text ? std::string(" (") + text + ")" : "");
  }

  /// Throws `what` failed with `result`, unless it succeeded.
  void check(CUresult result, const std::string &what) const {
    if (result == CUDA_SUCCESS)
      return;
    std::string message =
        what + " failed: " + describe(result) + kernelFaultNote(result);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free = 0, total = 0;
      if (cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS)
        message += "; " + std::to_string(free >> 20) + " MiB of " +
                   std::to_string(total >> 20) + " MiB free on " + deviceName;
    }
    throw std::runtime_error(message);
  }

  void makeCurrent() const {
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }

  /// Loads libcuda.so.1 and opens the device; on failure, `unavailable`
  /// says why.
  void initialize();
};

/// The process's driver, loaded once and never destroyed (models and their
/// outputs may be freed during exit).
Driver &driver();
/// driver(), with its context current; throws why CUDA cannot be used.
Driver &requireDriver();

} // namespace recur::cuda

#endif // RECUR_RUNTIME_CUDADRIVER_H
