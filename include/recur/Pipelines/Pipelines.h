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

void registerRecurPipelines();

} // namespace recur
} // namespace mlir

#endif // RECUR_PIPELINES_PIPELINES_H
