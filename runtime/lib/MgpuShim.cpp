//===- MgpuShim.cpp - the mgpu* functions a CUDA model's host code calls --===//
//
// The functions the generated host code calls, with the signatures of LLVM
// 22's mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp, run on the current
// model's stream (CudaModel.h). They are called from the model's code, so
// they never throw: the first failure of a run is recorded, and the runtime
// reports it when the run returns.
//
//===----------------------------------------------------------------------===//

#include "CudaModel.h"

#include "recur/runtime.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

namespace recur::cuda {
namespace {

/// The model whose code is running on this thread: mgpu* calls use its stream.
thread_local ModelGpu::State *current = nullptr;

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

} // namespace

CurrentModel::CurrentModel(ModelGpu::State *state) {
  current = state;
  state->error.clear();
  state->launches = 0;
  state->persistentLaunches.clear();
  state->libraryGemms = 0;
}

CurrentModel::~CurrentModel() { current = nullptr; }

std::vector<std::string> bindGpuSymbols(int (*bind)(void *(*)(const char *)),
                                        bool &libraryGemms) {
  std::vector<std::string> unresolved;
  unresolvedNames = &unresolved;
  bindingLibraryGemms = false;
  bind(&resolve);
  unresolvedNames = nullptr;
  libraryGemms = bindingLibraryGemms;
  return unresolved;
}

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

} // namespace recur::cuda
