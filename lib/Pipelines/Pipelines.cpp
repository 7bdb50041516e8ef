//===- Pipelines.cpp - Recur's pass pipelines -----------------------------===//

#include "recur/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "recur/Transforms/Passes.h"

using namespace mlir;

void mlir::recur::buildBufferizePipeline(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  // The runtime passes dense row-major tensors; identity layouts keep the
  // entry point's memref descriptors simple.
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // Function results become owned by the caller, who frees them.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());
}

void mlir::recur::buildLowerLoopsToLLVMPipeline(
    OpPassManager &pm, const CpuPipelineOptions &options) {
  // Requested first: the OpenMP conversion already turns func.func into
  // llvm.func.
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addPass(createLowerCopiesToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  if (options.openmp)
    pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // memref.alloca_scope (from the OpenMP conversion) must be lowered while its
  // region is still a single block, i.e. before scf becomes cf.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  if (options.openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::recur::buildLowerToCpuPipeline(OpPassManager &pm,
                                          const CpuPipelineOptions &options) {
  pm.addPass(createConvertRecurToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildBufferizePipeline(pm);
  buildLowerLoopsToLLVMPipeline(pm, options);
}

void mlir::recur::registerRecurPipelines() {
  PassPipelineRegistration<>(
      "recur-bufferize",
      "One-shot bufferization of a lowered recur module, with deallocation",
      [](OpPassManager &pm) { buildBufferizePipeline(pm); });
  PassPipelineRegistration<CpuPipelineOptions>(
      "recur-lower-loops-to-llvm",
      "Bufferized linalg to (OpenMP-)parallel loops and the LLVM dialect",
      buildLowerLoopsToLLVMPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "recur-lower-to-cpu",
      "recur ops to the LLVM dialect for the CPU: convert-recur-to-linalg, "
      "recur-bufferize, recur-lower-loops-to-llvm",
      buildLowerToCpuPipeline);
}
