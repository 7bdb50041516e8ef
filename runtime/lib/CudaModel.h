//===- CudaModel.h - a loaded CUDA model's GPU state ------------*- C++ -*-===//
//
// What the model side of the CUDA backend (Cuda.cpp) and the mgpu* functions
// the model's host code calls (MgpuShim.cpp) share: the model's stream and
// what its current run launched and met.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_CUDAMODEL_H
#define RECUR_RUNTIME_CUDAMODEL_H

#include "CublasLt.h"
#include "Cuda.h"
#include "CudaDriver.h"

#include <memory>
#include <string>
#include <vector>

namespace recur::cuda {

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

/// While alive, the mgpu* calls made on this thread are `state`'s model's:
/// they use its stream and record its launches and first error.
class CurrentModel {
public:
  explicit CurrentModel(ModelGpu::State *state);
  ~CurrentModel();
  CurrentModel(const CurrentModel &) = delete;
  CurrentModel &operator=(const CurrentModel &) = delete;
};

/// Hands a CUDA model's bind function (RECUR_MODEL_BIND_GPU_SYMBOL) the
/// runtime's mgpu* implementations. Returns the names it asked for that the
/// runtime lacks; `libraryGemms` says whether it calls recur_gpu_matmul.
std::vector<std::string> bindGpuSymbols(int (*bind)(void *(*)(const char *)),
                                        bool &libraryGemms);

/// "14 kernel launches; recur_persistent_forward_0: 1 cooperative launch of
/// 384 blocks x 256 threads (asked for 384; 8 per multiprocessor x 132
/// fit)", and what a grid smaller than asked costs.
std::string describeLaunches(const ModelGpu::State &state);

} // namespace recur::cuda

#endif // RECUR_RUNTIME_CUDAMODEL_H
