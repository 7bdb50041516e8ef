//===- FakeCudaDriver.cpp - a libcuda.so.1 for testing the runtime's host side
//
// Implements the driver functions librecur-runtime loads, with "device
// memory" in host memory and kernels that are counted, not run. It lets the
// CUDA backend's plumbing (binding a model, loading its kernels, streams,
// allocation, copies, errors, leaks) be tested on machines without a GPU;
// numerics need a real device (test/gpu/run-suite.sh).
//
// Built as build/test/fake-cuda/libcuda.so.1 and found through
// LD_LIBRARY_PATH by RecurFakeCudaTests only. fake_cuda_* functions let the
// test inspect and steer it.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace {
using CUresult = int;
using CUdeviceptr = unsigned long long; // as in cuda.h
constexpr CUresult kSuccess = 0, kOutOfMemory = 2, kInvalidHandle = 400,
                   kIllegalAddress = 700, kCooperativeLaunchTooLarge = 720;

std::set<void *> modules;
std::map<uintptr_t, size_t> allocations;
int nextModule = 1, launches = 0, foreignStreamUses = 0, capability = 90;
// Cooperative launches, the grid of the last one, and what the fake device
// reports: multiprocessors, blocks of any kernel per multiprocessor, and
// whether it can launch cooperatively.
int cooperativeLaunches = 0, lastCooperativeGrid = 0;
int multiprocessors = 4, blocksPerMultiprocessor = 2, cooperativeSupport = 1;
int invalidFrees = 0; // frees of memory that is not (or no longer) allocated
int allocationsUntilFailure = -1; // -1: never fail
// A kernel that faults: the launch after this many succeeds, and every call
// that reports kernel errors fails from then on, as a real context does.
int launchesUntilFault = -1; // -1: never
bool faulted = false;
void *const theStream = reinterpret_cast<void *>(0x5eed);
void *const legacyStream = reinterpret_cast<void *>(0x1);

uintptr_t allocate(size_t bytes) {
  auto pointer = reinterpret_cast<uintptr_t>(std::calloc(1, bytes ? bytes : 1));
  allocations[pointer] = bytes;
  return pointer;
}

CUresult release(uintptr_t pointer) {
  if (!allocations.erase(pointer)) {
    ++invalidFrees;
    return kInvalidHandle;
  }
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}

void useStream(void *stream) {
  if (stream != theStream && stream != legacyStream)
    ++foreignStreamUses;
}
} // namespace

extern "C" {
int fake_cuda_live_allocations() { return allocations.size(); }
int fake_cuda_loaded_modules() { return modules.size(); }
int fake_cuda_launches() { return launches; }
int fake_cuda_invalid_frees() { return invalidFrees; }
int fake_cuda_foreign_stream_uses() { return foreignStreamUses; }
void fake_cuda_fail_allocation(int nth) { allocationsUntilFailure = nth; }
void fake_cuda_fault_at_launch(int nth) {
  launchesUntilFault = nth;
  faulted = false;
}
void fake_cuda_set_capability(int value) { capability = value; }
int fake_cuda_cooperative_launches() { return cooperativeLaunches; }
int fake_cuda_last_cooperative_grid() { return lastCooperativeGrid; }
void fake_cuda_set_blocks_per_multiprocessor(int value) {
  blocksPerMultiprocessor = value;
}
void *fake_cuda_device_alloc(size_t bytes) {
  return reinterpret_cast<void *>(allocate(bytes));
}
void fake_cuda_device_free(void *pointer) {
  release(reinterpret_cast<uintptr_t>(pointer));
}

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == kOutOfMemory      ? "CUDA_ERROR_OUT_OF_MEMORY"
          : result == kInvalidHandle  ? "CUDA_ERROR_INVALID_HANDLE"
          : result == kIllegalAddress ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : result == kCooperativeLaunchTooLarge
              ? "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"
              : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult, const char **text) {
  *text = "fake driver";
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Fake GPU");
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 16: // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    *value = multiprocessors;
    break;
  case 75: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    *value = capability / 10;
    break;
  case 76: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    *value = capability % 10;
    break;
  case 95: // CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH
    *value = cooperativeSupport;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  *context = reinterpret_cast<void *>(0xc0);
  return kSuccess;
}
CUresult cuDeviceGetDefaultMemPool(void **pool, int) {
  *pool = reinterpret_cast<void *>(0x9);
  return kSuccess;
}
CUresult cuMemPoolSetAttribute(void *, int, void *) { return kSuccess; }
CUresult cuCtxSetCurrent(void *) { return kSuccess; }
CUresult cuModuleLoadData(void **module, const void *image) {
  // A fatbin starts with its magic number.
  uint32_t magic;
  std::memcpy(&magic, image, sizeof magic);
  if (magic != 0xBA55ED50u)
    return kInvalidHandle;
  *module = reinterpret_cast<void *>(static_cast<uintptr_t>(nextModule++) * 16);
  modules.insert(*module);
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  return modules.erase(module) ? kSuccess : kInvalidHandle;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *) {
  if (faulted)
    return kIllegalAddress;
  if (!modules.count(module))
    return kInvalidHandle;
  *function = static_cast<char *>(module) + 1;
  return kSuccess;
}
CUresult cuLaunchKernel(void *function, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *stream, void **,
                        void **) {
  if (faulted)
    return kIllegalAddress;
  if (!modules.count(static_cast<char *>(function) - 1))
    return kInvalidHandle;
  useStream(stream);
  ++launches;
  if (launchesUntilFault >= 0 && launchesUntilFault-- == 0)
    faulted = true; // the launch succeeds, the kernel faults later
  return kSuccess;
}
CUresult cuLaunchCooperativeKernel(void *function, unsigned gridX, unsigned,
                                   unsigned, unsigned, unsigned, unsigned,
                                   unsigned, void *stream, void **) {
  if (!modules.count(static_cast<char *>(function) - 1))
    return kInvalidHandle;
  // As the driver: a grid that cannot be resident at once is refused.
  if (gridX > unsigned(multiprocessors * blocksPerMultiprocessor))
    return kCooperativeLaunchTooLarge;
  useStream(stream);
  ++launches;
  ++cooperativeLaunches;
  lastCooperativeGrid = gridX;
  return kSuccess;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *, int,
                                                     size_t) {
  *blocks = blocksPerMultiprocessor;
  return kSuccess;
}
CUresult cuStreamCreate(void **stream, unsigned) {
  *stream = theStream;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *) { return kSuccess; }
CUresult cuStreamSynchronize(void *) {
  return faulted ? kIllegalAddress : kSuccess;
}
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = size_t(1) << 30;
  *total = size_t(2) << 30;
  return kSuccess;
}
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  *pointer = allocate(bytes);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) { return release(pointer); }
CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, void *stream) {
  useStream(stream);
  if (allocationsUntilFailure >= 0 && allocationsUntilFailure-- == 0)
    return kOutOfMemory;
  *pointer = allocate(bytes);
  return kSuccess;
}
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  useStream(stream);
  return release(pointer);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr device, const void *host, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(device), host, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *host, CUdeviceptr device, size_t bytes) {
  std::memcpy(host, reinterpret_cast<void *>(device), bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr destination, CUdeviceptr source,
                         size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(destination),
              reinterpret_cast<void *>(source), bytes);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr device, const void *host,
                              size_t bytes, void *stream) {
  useStream(stream);
  std::memcpy(reinterpret_cast<void *>(device), host, bytes);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr device, unsigned value, size_t count,
                          void *stream) {
  useStream(stream);
  auto *words = reinterpret_cast<unsigned *>(device);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return kSuccess;
}
} // extern "C"
