//===- Cuda.cpp - the runtime's CUDA backend ------------------------------===//

#include "Cuda.h"
#include "CublasLt.h"

#include "recur/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace recur::cuda {
namespace {

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

  void initialize() {
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
        cuDeviceGetAttribute(&major,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             device) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&minor,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
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
    deviceName = std::string(nameBuffer) + " (sm_" +
                 std::to_string(capability) + "), device " +
                 std::to_string(ordinal);
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
};

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

} // namespace

/// A persistent kernel's launch: the grid the code asked for and the one
/// that fits on the device at once.
struct PersistentLaunch {
  std::string kernel;
  intptr_t requestedBlocks = 0, blocks = 0, threads = 0;
  int blocksPerMultiprocessor = 0;
};

struct ModelGpu::State {
  CUstream stream = nullptr;
  void *library = nullptr;
  bool kernelsLoaded = false;
  /// The first failure of an mgpu* call during the current call into the
  /// model; later calls do nothing, and the runtime reports it afterwards.
  std::string error;
  /// What the current call into the model launched.
  int launches = 0;
  std::vector<PersistentLaunch> persistentLaunches;
  int libraryGemms = 0;
  /// Models compiled with --gemm=cublaslt: the library and its scratch.
  std::unique_ptr<CublasLt> blas;
  DeviceBuffer blasWorkspace;
  /// How the last run executed (runReport).
  std::string report;
};

namespace {

/// The model whose code is running on this thread: mgpu* calls use its stream.
thread_local ModelGpu::State *current = nullptr;

struct CurrentModel {
  explicit CurrentModel(ModelGpu::State *state) {
    current = state;
    state->error.clear();
    state->launches = 0;
    state->persistentLaunches.clear();
    state->libraryGemms = 0;
  }
  ~CurrentModel() { current = nullptr; }
};

bool failing() { return !current || !current->error.empty(); }

void recordMessage(CUresult result, const std::string &what) {
  current->error = what + " failed: " + driver().describe(result);
  if (std::string note = Driver::kernelFaultNote(result); !note.empty())
    current->error += note + " (" + std::to_string(current->launches) +
                      " launched in this run)";
  if (result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
      result == CUDA_ERROR_INVALID_PTX)
    current->error += "; the kernels were not compiled for " +
                      driver().deviceName +
                      ": recompile with recur-compile --cuda-arch";
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free = 0, total = 0;
    if (driver().cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS)
      current->error += "; " + std::to_string(free >> 20) + " MiB of " +
                        std::to_string(total >> 20) + " MiB free on " +
                        driver().deviceName;
  }
}

/// Records the first failure of the current call into the model. `what` is
/// only called on failure: no string is built on the launch path.
template <typename What> void record(CUresult result, What what) noexcept {
  if (result == CUDA_SUCCESS || !current || !current->error.empty())
    return;
  try {
    recordMessage(result, what());
  } catch (...) {
    current->error = "CUDA error " + std::to_string(result);
  }
}

// The functions the generated host code calls, with the signatures of LLVM
// 22's mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp. They are called from
// the model's code, so they never throw: failures are recorded.

void *mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) noexcept {
  CUmodule module = nullptr;
  if (!failing())
    record(driver().cuModuleLoadData(&module, data),
           [] { return "loading the model's kernels (cuModuleLoadData)"; });
  return module;
}

void mgpuModuleUnload(void *module) noexcept {
  if (module)
    driver().cuModuleUnload(module);
}

/// The persistent kernels among the functions the models looked up, by
/// handle: launched cooperatively.
std::mutex persistentKernelsMutex;
std::map<CUfunction, std::string> persistentKernels;

void *mgpuModuleGetFunction(void *module, const char *name) noexcept {
  CUfunction function = nullptr;
  if (!failing() && module)
    record(driver().cuModuleGetFunction(&function, module, name),
           [&] { return std::string("finding kernel ") + name; });
  if (function &&
      std::strncmp(name, RECUR_PERSISTENT_KERNEL_PREFIX,
                   sizeof RECUR_PERSISTENT_KERNEL_PREFIX - 1) == 0) {
    try {
      std::lock_guard<std::mutex> lock(persistentKernelsMutex);
      persistentKernels.emplace(function, name);
    } catch (...) {
      record(CUDA_ERROR_OUT_OF_MEMORY, [] { return "recording a kernel"; });
    }
  }
  return function;
}

/// The name of `function` if it is a persistent kernel, else null.
const std::string *persistentKernelName(CUfunction function) {
  std::lock_guard<std::mutex> lock(persistentKernelsMutex);
  auto found = persistentKernels.find(function);
  return found == persistentKernels.end() ? nullptr : &found->second;
}

/// A persistent kernel's blocks wait for one another at grid barriers: they
/// must all be resident at once. A cooperative launch guarantees it (or
/// fails), with a grid no larger than the occupancy calculator allows; the
/// kernel's grid-stride loops compute the same result on any grid.
void launchPersistent(const std::string &name, CUfunction function,
                      intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                      int32_t sharedMemoryBytes, CUstream stream,
                      void **params) noexcept {
  Driver &d = driver();
  intptr_t threads = blockX * blockY * blockZ;
  if (gridY != 1 || gridZ != 1) {
    record(CUDA_ERROR_NOT_SUPPORTED, [&] {
      return "launching " + name + " with a grid that is not 1-D";
    });
    return;
  }
  if (!d.cooperativeLaunch) {
    record(CUDA_ERROR_NOT_SUPPORTED, [&] {
      return "launching " + name + ", a persistent kernel: " + d.deviceName +
             " does not support cooperative launches; recompile with "
             "recur-compile --no-persistent-kernels";
    });
    return;
  }
  int perMultiprocessor = 0;
  record(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
             &perMultiprocessor, function, threads, sharedMemoryBytes),
         [&] { return "sizing the grid of " + name; });
  if (failing())
    return;
  intptr_t fit = intptr_t(perMultiprocessor) * d.multiprocessors;
  if (fit == 0) {
    record(CUDA_ERROR_NOT_SUPPORTED, [&] {
      return "launching " + name + ": not one block of " +
             std::to_string(threads) + " threads fits on a multiprocessor of " +
             d.deviceName + " (registers or shared memory)";
    });
    return;
  }
  intptr_t blocks = std::min(gridX, fit);
  record(d.cuLaunchCooperativeKernel(function, blocks, 1, 1, blockX, blockY,
                                     blockZ, sharedMemoryBytes, stream, params),
         [&] {
           return "launching " + name + " cooperatively (grid " +
                  std::to_string(blocks) + ", block " +
                  std::to_string(threads) + ")";
         });
  try {
    current->persistentLaunches.push_back(
        {name, gridX, blocks, threads, perMultiprocessor});
  } catch (...) {
    record(CUDA_ERROR_OUT_OF_MEMORY, [] { return "recording a launch"; });
  }
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **params, void **extra,
                      size_t /*paramsCount*/) noexcept {
  if (failing() || !function)
    return;
  ++current->launches;
  if (const std::string *name = persistentKernelName(function))
    return launchPersistent(*name, function, gridX, gridY, gridZ, blockX,
                            blockY, blockZ, sharedMemoryBytes, stream, params);
  record(driver().cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                                 blockZ, sharedMemoryBytes, stream, params,
                                 extra),
         [&] {
           return "launching a kernel (grid " + std::to_string(gridX) + "x" +
                  std::to_string(gridY) + "x" + std::to_string(gridZ) +
                  ", block " + std::to_string(blockX) + ")";
         });
}

// Every stream the host code asks for is the model's own stream: it lives as
// long as the model, and nothing is created or destroyed per launch.
void *mgpuStreamCreate() noexcept {
  return current ? current->stream : nullptr;
}
void mgpuStreamDestroy(void * /*stream*/) noexcept {}

// The host code synchronizes at the end of each region of asynchronous GPU
// work (e.g. every time step). All its GPU work is ordered on one stream and
// its host part never touches device memory (recur-gpu-device-memory rejects
// such code), so waiting is deferred to the end of the run.
void mgpuStreamSynchronize(void * /*stream*/) noexcept {}

void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared) noexcept {
  CUdeviceptr pointer = 0;
  if (failing() || bytes == 0)
    return nullptr;
  if (hostShared) { // recur-gpu-device-memory never asks for it
    record(CUDA_ERROR_NOT_SUPPORTED,
           [] { return "a host-shared (managed) allocation"; });
    return nullptr;
  }
  record(driver().cuMemAllocAsync(&pointer, bytes, stream), [&] {
    return "allocating " + std::to_string(bytes) +
           " bytes of GPU memory for a model buffer";
  });
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemset32(void *pointer, unsigned value, size_t count,
                  void *stream) noexcept {
  if (!failing() && pointer)
    record(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(pointer),
                                     value, count, stream),
           [] { return "clearing a model buffer"; });
}

void mgpuMemFree(void *pointer, void *stream) noexcept {
  if (pointer)
    record(
        driver().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream),
        [] { return "freeing a model buffer"; });
}

// --gemm=cublaslt's GEMMs (runtime.h), run by cuBLASLt on the model's stream.
void recur_gpu_matmul(int64_t m, int64_t n, int64_t k, uint64_t a, int64_t lda,
                      uint64_t b, int64_t ldb, uint64_t c, int64_t ldc,
                      int32_t precision) noexcept {
  if (failing())
    return;
  ++current->libraryGemms;
  std::string error = current->blas->matmul(
      m, n, k, a, lda, b, ldb, c, ldc, precision, current->blasWorkspace.data(),
      current->blasWorkspace.size(), current->stream);
  if (!error.empty())
    current->error = std::move(error);
}

/// Kernels are loaded once per library: dlopen returns the same handle (and
/// the same module globals) for every model loaded from one file, so the
/// first model loads them and the last one unloads them.
struct LoadedLibrary {
  int users = 0;
  void (*fini)() = nullptr;
};
std::mutex loadedLibrariesMutex;
std::map<void *, LoadedLibrary> loadedLibraries;

/// What a model's bind function receives: our implementation of `name`.
thread_local std::vector<std::string> *unresolvedNames = nullptr;
/// Whether the model being bound calls recur_gpu_matmul.
thread_local bool bindingLibraryGemms = false;

void *resolve(const char *name) {
  std::string wanted = name;
#define RECUR_ENTRY(function)                                                  \
  if (wanted == #function)                                                     \
    return reinterpret_cast<void *>(&function);
  RECUR_ENTRY(mgpuModuleLoad)
  RECUR_ENTRY(mgpuModuleUnload)
  RECUR_ENTRY(mgpuModuleGetFunction)
  RECUR_ENTRY(mgpuLaunchKernel)
  RECUR_ENTRY(mgpuStreamCreate)
  RECUR_ENTRY(mgpuStreamDestroy)
  RECUR_ENTRY(mgpuStreamSynchronize)
  RECUR_ENTRY(mgpuMemAlloc)
  RECUR_ENTRY(mgpuMemFree)
  RECUR_ENTRY(mgpuMemset32)
#undef RECUR_ENTRY
  if (wanted == RECUR_GPU_MATMUL_SYMBOL) {
    bindingLibraryGemms = true;
    return reinterpret_cast<void *>(&recur_gpu_matmul);
  }
  if (unresolvedNames)
    unresolvedNames->push_back(wanted);
  return nullptr;
}

/// "14 kernel launches; recur_persistent_forward_0: 1 cooperative launch of
/// 384 blocks x 256 threads (asked for 384; 8 per multiprocessor x 132
/// fit)", and what a grid smaller than asked costs.
std::string describeLaunches(const ModelGpu::State &state) {
  std::string report = std::to_string(state.launches) + " kernel launch" +
                       (state.launches == 1 ? "" : "es");
  if (state.blas)
    report += ", " + std::to_string(state.libraryGemms) + " GEMM" +
              (state.libraryGemms == 1 ? "" : "s") + " by " +
              state.blas->version();
  // Per kernel: how many launches, and the last one's grid.
  std::map<std::string, std::pair<size_t, const PersistentLaunch *>> byKernel;
  for (const PersistentLaunch &launch : state.persistentLaunches) {
    auto &[count, last] = byKernel[launch.kernel];
    ++count;
    last = &launch;
  }
  for (const auto &[kernel, launches] : byKernel) {
    const auto &[count, last] = launches;
    report += "; " + kernel + ": " + std::to_string(count) +
              " cooperative launch" + (count == 1 ? "" : "es") + " of " +
              std::to_string(last->blocks) +
              (last->blocks == 1 ? " block x " : " blocks x ") +
              std::to_string(last->threads) + " threads (asked for " +
              std::to_string(last->requestedBlocks) + "; " +
              std::to_string(last->blocksPerMultiprocessor) +
              " per multiprocessor x " +
              std::to_string(driver().multiprocessors) + " fit)";
    // What a smaller grid costs an LSTM kernel (gpu.md, "Weights on chip").
    if (last->blocks < last->requestedBlocks)
      report += ", so each block runs several blocks' work, and an LSTM "
                "step's blocks reload their groups' weights into shared "
                "memory at every step";
  }
  return report;
}

} // namespace

bool available(std::string &reason) {
  reason = driver().unavailable;
  return reason.empty();
}

DeviceBuffer::DeviceBuffer(size_t size, const std::string &what) {
  Driver &d = requireDriver();
  CUdeviceptr allocated = 0;
  if (size)
    d.check(d.cuMemAlloc_v2(&allocated, size),
            "allocating " + std::to_string(size) + " bytes of GPU memory for " +
                what);
  pointer = allocated;
  bytes = size;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : pointer(other.pointer), bytes(other.bytes) {
  other.pointer = 0;
  other.bytes = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  std::swap(pointer, other.pointer);
  std::swap(bytes, other.bytes);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer) {
    driver().cuCtxSetCurrent(driver().context);
    driver().cuMemFree_v2(pointer);
  }
}

ModelGpu::ModelGpu(std::unique_ptr<State> state) : state(std::move(state)) {}

const std::string &ModelGpu::deviceName() const { return driver().deviceName; }

std::unique_ptr<ModelGpu> ModelGpu::load(void *libraryHandle,
                                         const std::string &path,
                                         const std::string &cudaArch) {
  std::string reason;
  if (!available(reason))
    throw std::runtime_error("cannot run CUDA model '" + path + "': " + reason);
  Driver &d = requireDriver();
  int required = 0;
  if (cudaArch.rfind("sm_", 0) != 0 ||
      (required = std::atoi(cudaArch.c_str() + 3)) <= 0)
    throw std::runtime_error(
        "'" + path + "' names no valid CUDA architecture ('" + cudaArch + "')");
  // The fatbin holds a cubin for `cudaArch` and its PTX, which the driver can
  // compile for newer GPUs but not for older ones.
  if (d.capability < required)
    throw std::runtime_error("'" + path + "' was compiled for " + cudaArch +
                             " but " + d.deviceName +
                             " is older: recompile "
                             "with recur-compile --cuda-arch=sm_" +
                             std::to_string(d.capability));

  auto bind = reinterpret_cast<int (*)(void *(*)(const char *))>(
      dlsym(libraryHandle, RECUR_MODEL_BIND_GPU_SYMBOL));
  auto init = reinterpret_cast<void (*)()>(
      dlsym(libraryHandle, RECUR_MODEL_GPU_INIT_SYMBOL));
  auto fini = reinterpret_cast<void (*)()>(
      dlsym(libraryHandle, RECUR_MODEL_GPU_FINI_SYMBOL));
  if (!bind || !init || !fini)
    throw std::runtime_error("'" + path +
                             "' says it is a CUDA model but does "
                             "not export " RECUR_MODEL_BIND_GPU_SYMBOL
                             ", " RECUR_MODEL_GPU_INIT_SYMBOL
                             " and " RECUR_MODEL_GPU_FINI_SYMBOL);
  std::vector<std::string> unresolved;
  unresolvedNames = &unresolved;
  bindingLibraryGemms = false;
  bind(&resolve);
  unresolvedNames = nullptr;
  if (!unresolved.empty()) {
    std::string names;
    for (const std::string &name : unresolved)
      names += (names.empty() ? "" : ", ") + name;
    throw std::runtime_error("'" + path +
                             "' calls GPU runtime functions this "
                             "runtime does not provide: " +
                             names);
  }

  auto state = std::make_unique<State>();
  if (bindingLibraryGemms) {
    try {
      state->blas = CublasLt::create();
    } catch (const std::exception &error) {
      throw std::runtime_error("cannot run '" + path + "': " + error.what());
    }
    state->blasWorkspace =
        DeviceBuffer(CublasLt::kWorkspaceBytes, "cuBLASLt's workspace");
  }
  d.check(d.cuStreamCreate(&state->stream, CU_STREAM_DEFAULT),
          "creating the model's stream");
  std::unique_ptr<ModelGpu> gpu(new ModelGpu(std::move(state)));
  std::lock_guard<std::mutex> lock(loadedLibrariesMutex);
  LoadedLibrary &library = loadedLibraries[libraryHandle];
  if (library.users == 0) {
    {
      CurrentModel scope(gpu->state.get());
      init();
    }
    library.fini = fini;
  }
  ++library.users;
  gpu->state->library = libraryHandle;
  gpu->state->kernelsLoaded = true;
  if (!gpu->state->error.empty())
    throw std::runtime_error("cannot load the kernels of '" + path + "' on " +
                             d.deviceName + ": " + gpu->state->error);
  return gpu;
}

ModelGpu::~ModelGpu() {
  Driver &d = driver();
  d.cuCtxSetCurrent(d.context);
  d.cuStreamSynchronize(state->stream);
  if (state->kernelsLoaded) {
    std::lock_guard<std::mutex> lock(loadedLibrariesMutex);
    LoadedLibrary &library = loadedLibraries[state->library];
    if (--library.users == 0) {
      CurrentModel scope(state.get());
      library.fini();
      loadedLibraries.erase(state->library);
    }
  }
  d.cuStreamDestroy_v2(state->stream);
}

int ModelGpu::deviceOrdinal() const { return driver().ordinal; }

void ModelGpu::copyToDevice(void *device, const void *host,
                            size_t bytes) const {
  Driver &d = requireDriver();
  d.check(d.cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(device), host, bytes),
          "copying to the GPU");
}

void ModelGpu::copyToDeviceAsync(void *device, const void *host,
                                 size_t bytes) const {
  Driver &d = requireDriver();
  d.check(d.cuMemcpyHtoDAsync_v2(reinterpret_cast<CUdeviceptr>(device), host,
                                 bytes, state->stream),
          "copying an input to the GPU");
}

void ModelGpu::copyToHost(void *host, const void *device, size_t bytes) const {
  Driver &d = requireDriver();
  d.check(d.cuStreamSynchronize(state->stream), "waiting for the GPU");
  d.check(d.cuMemcpyDtoH_v2(host, reinterpret_cast<CUdeviceptr>(device), bytes),
          "copying from the GPU");
}

void ModelGpu::copyOnDevice(void *destination, const void *source,
                            size_t bytes) const {
  Driver &d = requireDriver();
  d.check(d.cuMemcpyDtoD_v2(reinterpret_cast<CUdeviceptr>(destination),
                            reinterpret_cast<CUdeviceptr>(source), bytes),
          "copying on the GPU");
}

void ModelGpu::run(void (*entry)(void **), void **arguments) {
  Driver &d = requireDriver();
  {
    CurrentModel scope(state.get());
    entry(arguments);
  }
  CUresult result = d.cuStreamSynchronize(state->stream);
  state->report = describeLaunches(*state);
  if (!state->error.empty())
    throw std::runtime_error(state->error);
  d.check(result, "running the model's kernels");
}

const std::string &ModelGpu::runReport() const { return state->report; }

void *ModelGpu::duplicate(const void *source, size_t bytes,
                          const std::string &what) {
  Driver &d = requireDriver();
  CUdeviceptr copy = 0;
  d.check(d.cuMemAllocAsync(&copy, bytes ? bytes : 1, state->stream),
          "allocating " + std::to_string(bytes) + " bytes of GPU memory for " +
              what);
  try {
    d.check(d.cuStreamSynchronize(state->stream), "waiting for the GPU");
    copyOnDevice(reinterpret_cast<void *>(copy), source, bytes);
  } catch (...) {
    freeModelAllocation(reinterpret_cast<void *>(copy));
    throw;
  }
  return reinterpret_cast<void *>(copy);
}

void ModelGpu::freeModelAllocation(void *pointer) {
  if (!pointer)
    return;
  Driver &d = driver();
  d.cuCtxSetCurrent(d.context);
  // Stream-ordered after the legacy stream: work the caller queued there on
  // this output (e.g. PyTorch's) finishes before the memory is reused.
  d.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), CU_STREAM_LEGACY);
}

} // namespace recur::cuda
