//===- CudaDriver.cpp - the CUDA driver API, loaded on first use ----------===//

#include "CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace recur::cuda {

void Driver::initialize() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    unavailable = std::string("no CUDA driver: libcuda.so.1 cannot be "
                              "loaded (") +
                  (reason ? reason : "unknown reason") + ")";
    return;
  }
#define RECUR_RESOLVE(name, ...)                                               \
  name = reinterpret_cast<decltype(name)>(dlsym(library, #name));              \
  if (!name) {                                                                 \
    unavailable = "the CUDA driver is too old: libcuda.so.1 lacks " #name;     \
    return;                                                                    \
  }
  RECUR_CUDA_FUNCTIONS(RECUR_RESOLVE)
#undef RECUR_RESOLVE
  CUresult result = cuInit(0);
  if (result == CUDA_ERROR_NO_DEVICE || result == CUDA_ERROR_STUB_LIBRARY) {
    unavailable = "no CUDA device (cuInit: " + describe(result) + ")";
    return;
  }
  if (result != CUDA_SUCCESS) {
    unavailable =
        "the CUDA driver failed to start (cuInit: " + describe(result) + ")";
    return;
  }
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    unavailable = "no CUDA device (the driver reports none)";
    return;
  }
  if (const char *chosen = std::getenv("RECUR_CUDA_DEVICE"))
    ordinal = std::atoi(chosen);
  if (ordinal < 0 || ordinal >= count) {
    unavailable = "RECUR_CUDA_DEVICE=" + std::to_string(ordinal) +
                  " names no device; there are " + std::to_string(count);
    return;
  }
  int major = 0, minor = 0;
  char nameBuffer[256] = {};
  if (cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           device) != CUDA_SUCCESS ||
      cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           device) != CUDA_SUCCESS ||
      cuDeviceGetName(nameBuffer, sizeof nameBuffer - 1, device) !=
          CUDA_SUCCESS) {
    unavailable =
        "CUDA device " + std::to_string(ordinal) + " cannot be queried";
    return;
  }
  capability = major * 10 + minor;
  int cooperative = 0;
  cuDeviceGetAttribute(&multiprocessors,
                       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  cuDeviceGetAttribute(&cooperative, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                       device);
  cooperativeLaunch = cooperative != 0;
  deviceName = std::string(nameBuffer) + " (sm_" + std::to_string(capability) +
               "), device " + std::to_string(ordinal);
  result = cuDevicePrimaryCtxRetain(&context, device);
  if (result != CUDA_SUCCESS) {
    unavailable =
        "cannot create a context on " + deviceName + ": " + describe(result);
    return;
  }
  // Models allocate their temporaries from the stream-ordered pool on every
  // run; keeping freed memory in the pool makes that allocation cheap.
  CUmemoryPool pool = nullptr;
  uint64_t keepAll = UINT64_MAX;
  if (cuDeviceGetDefaultMemPool(&pool, device) == CUDA_SUCCESS)
    cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll);
}

Driver &driver() {
  // Never destroyed: models (and their outputs) may be freed during exit.
  static Driver *instance = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    instance = new Driver;
    instance->initialize();
  });
  return *instance;
}

Driver &requireDriver() {
  Driver &d = driver();
  if (!d.unavailable.empty())
    throw std::runtime_error(d.unavailable);
  d.makeCurrent();
  return d;
}

} // namespace recur::cuda
