//===- Cuda.cpp - the runtime's CUDA backend ------------------------------===//
//
// A loaded CUDA model's device side: its stream, its kernels (loaded once
// per library), copies, runs; device buffers the runtime owns. The driver
// is CudaDriver.cpp's, the calls the model's code makes MgpuShim.cpp's.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "CudaModel.h"

#include "recur/runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

namespace recur::cuda {
namespace {

/// Kernels are loaded once per library: dlopen returns the same handle (and
/// the same module globals) for every model loaded from one file, so the
/// first model loads them and the last one unloads them.
struct LoadedLibrary {
  int users = 0;
  void (*fini)() = nullptr;
};
std::mutex loadedLibrariesMutex;
std::map<void *, LoadedLibrary> loadedLibraries;

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
  bool libraryGemms = false;
  std::vector<std::string> unresolved = bindGpuSymbols(bind, libraryGemms);
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
  if (libraryGemms) {
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
