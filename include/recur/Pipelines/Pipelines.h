//===- Pipelines.h - Recur's pass pipelines ---------------------*- C++ -*-===//
//
// The stages from recur ops to LLVM dialect, each a registered pipeline so that
// `recur-opt` can stop after any of them.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_PIPELINES_PIPELINES_H
#define RECUR_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace recur {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> openmp{*this, "openmp",
                      llvm::cl::desc("Run parallel loops on OpenMP threads"),
                      llvm::cl::init(true)};
};

struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture of the cubin"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features, e.g. +ptx80"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu.binary holds: fatbin (cubin + PTX), bin "
                     "(cubin), isa (PTX text), llvm or offloading"),
      llvm::cl::init("fatbin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (ptxas, fatbinary, libdevice); default: the "
                     "one found when Recur was built"),
      llvm::cl::init(defaultCudaToolkit())};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("NVPTX optimization level"),
                            llvm::cl::init(3)};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of every kernel"), llvm::cl::init(256)};

  static std::string defaultCudaToolkit();
};

/// recur-bufferize: one-shot bufferization of the whole module (function
/// boundaries included, identity layouts) and ownership-based deallocation.
void buildBufferizePipeline(OpPassManager &pm);

/// recur-lower-loops-to-llvm: linalg on buffers to (OpenMP-)parallel loops,
/// then everything to the LLVM dialect with C wrappers for the entry points.
void buildLowerLoopsToLLVMPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options);

/// recur-lower-to-cpu: convert-recur-to-linalg, canonicalize/cse,
/// recur-bufferize, recur-lower-loops-to-llvm.
void buildLowerToCpuPipeline(OpPassManager &pm,
                             const CpuPipelineOptions &options);

/// recur-map-to-gpu: bufferized linalg to gpu.launch_func kernels. Every loop
/// nest becomes a 1-D kernel of `block-size` threads, every buffer lives on
/// the device, and GPU operations on the host are asynchronous on one stream.
void buildMapToGpuPipeline(OpPassManager &pm,
                           const CudaPipelineOptions &options);

/// recur-lower-gpu-to-nvvm: kernels to NVVM and a `gpu.binary` (by default a
/// fatbin with the cubin for `chip` and its PTX); host code to the LLVM
/// dialect calling the `mgpu*` runtime functions.
void buildLowerGpuToNVVMPipeline(OpPassManager &pm,
                                 const CudaPipelineOptions &options);

/// recur-lower-to-cuda: convert-recur-to-linalg, canonicalize/cse,
/// recur-bufferize, recur-map-to-gpu, recur-lower-gpu-to-nvvm.
void buildLowerToCudaPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);

void registerRecurPipelines();

} // namespace recur
} // namespace mlir

#endif // RECUR_PIPELINES_PIPELINES_H
