//===- Pipelines.cpp - Recur's pass pipelines -----------------------------===//

#include "recur/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "recur/Codegen/Passes.h"
#include "recur/Conversion/Passes.h"
#include "recur/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::recur;

StringRef mlir::recur::stringifyFusionLevel(FusionLevel level) {
  switch (level) {
  case FusionLevel::none:
    return "none";
  case FusionLevel::hoist:
    return "hoist";
  case FusionLevel::cell:
    return "cell";
  case FusionLevel::wavefront:
    return "wavefront";
  }
  llvm_unreachable("unknown fusion level");
}

void mlir::recur::buildFusionPipeline(
    OpPassManager &pm, FusionLevel level, const CpuGemmTile &gemmTile,
    bool bf16Products, ArrayRef<std::string> inputShapes,
    int64_t wavefrontMaxLayers, bool activeRowProducts, bool cellUnitSteps) {
  if (!inputShapes.empty()) {
    SpecializeShapesOptions shapes;
    shapes.inputs = llvm::to_vector(inputShapes);
    pm.addPass(createSpecializeShapes(shapes));
  }
  // A training step's backward pass is recur ops that fusion sees too.
  pm.addNestedPass<func::FuncOp>(createDifferentiate());
  // bf16/f16 models keep their interface and compute in f32.
  pm.addNestedPass<func::FuncOp>(createComputeInF32());
  // GRU and RNN layers as the recurrence of their cell region.
  pm.addPass(createGeneralizeCells());
  // Packed batches' steps on their active rows (before the input hoist, so
  // that it reads the rows in order).
  pm.addPass(createSortByLength(SortByLengthOptions{activeRowProducts}));
  if (level >= FusionLevel::hoist) {
    pm.addPass(createHoistInputProjection());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(createFoldEmbeddingProjection());
  }
  // A cell region's pointwise ops as few loop nests.
  if (level >= FusionLevel::cell)
    pm.addPass(createFuseCellPointwise());
  // With vector GEMM kernels, a fused step's tile is the four gates of one
  // vector of units.
  if (level >= FusionLevel::cell)
    pm.addPass(gemmTile.enabled() ? createFuseLSTMCell(FuseLSTMCellOptions{
                                        gemmTile.vectorWidth, true})
                                  : createFuseLSTMCell());
  // Any other cell's tail runs on its recurrent product's register tile:
  // the G gates of K units, one panel; without a tile, as unit steps (the
  // GPU's) or not at all.
  if (level >= FusionLevel::cell)
    pm.addPass(createFuseCellStep(FuseCellStepOptions{
        gemmTile.vectorWidth, std::max<int64_t>(gemmTile.columns, 1),
        cellUnitSteps && !gemmTile.enabled()}));
  if (level >= FusionLevel::wavefront)
    pm.addPass(createWavefront(WavefrontOptions{
        wavefrontMaxLayers, cellUnitSteps && !gemmTile.enabled()}));
  if (level > FusionLevel::none && gemmTile.enabled())
    pm.addPass(createPackWeights(PackWeightsOptions{
        gemmTile.columns, gemmTile.vectorWidth, bf16Products}));
  // What fusion computed from the weights alone runs once per binding.
  if (level > FusionLevel::none)
    pm.addPass(createOutlineWeightPrologue());
}

void mlir::recur::buildConvertRecurPipeline(OpPassManager &pm, bool forGpu) {
  ConvertRecurToLinalgOptions options;
  // For the GPU, tasks enough for the threads of a few blocks, each walking
  // every id: the reference LM's 64 x 128 walk 6400 ids.
  options.embeddingGradRowBlocks = forGpu ? 64 : 0;
  // A packed batch's hoisted input product: step by step on the active
  // rows (the CPU's GEMM kernels), or one tiled GEMM kernel on the GPU,
  // where per-step GEMMs in a persistent kernel would be plain loop nests.
  options.activeRowProducts = !forGpu;
  pm.addPass(createConvertRecurToLinalg(options));
  // Fusion adds elementwise arith on tensors (e.g. the two biases' sum).
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  // Before CSE, which would make every layer's tensor.empty of one shape a
  // single value: bufferization would then see one alias set spanning all
  // layers, its time quadratic in their number (10 s of a 200-layer
  // stack's compile; 0.4 s with an allocation each).
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  pm.addPass(createCSEPass());
}

void mlir::recur::buildBufferizePipeline(OpPassManager &pm,
                                         bool hoistStepBuffers) {
  pm.addNestedPass<func::FuncOp>(createMarkWritableArguments());
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  // The runtime passes dense row-major tensors; identity layouts keep the
  // entry point's memref descriptors simple.
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // A step's temporaries, allocated once rather than at every step, so that
  // the time loop runs on one thread team (recur-persistent-parallel-loops):
  // their sizes, folded to the loop's invariants first, allow it. Those of
  // a wavefront layer's step leave its condition (scf.if) first.
  if (hoistStepBuffers) {
    pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createAllocateAtBound());
    pm.addNestedPass<func::FuncOp>(createHoistConditionalBuffers());
    pm.addNestedPass<func::FuncOp>(
        bufferization::createBufferLoopHoistingPass());
  }
  // Before deallocation, which would copy a returned weight.
  pm.addNestedPass<func::FuncOp>(createUpdateWeightsInPlace());
  // Function results become owned by the caller, who frees them.
  bufferization::buildBufferDeallocationPipeline(pm);
  // A result that is an argument (a model returning an input or a weight)
  // becomes a bufferization.clone: an allocation and a copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::recur::buildCpuTileAndVectorizePipeline(
    OpPassManager &pm, const CpuPipelineOptions &options) {
  // The embedding gradient's scf.forall tasks become threads.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createLowerCopiesToLinalg());
  if (CpuGemmTile tile = options.gemmTile(); tile.enabled()) {
    VectorizePackedMatmulsOptions matmuls;
    matmuls.vectorWidth = tile.vectorWidth;
    matmuls.vectorRegisters = tile.vectorRegisters;
    matmuls.bf16Dot = options.bf16Dot;
    pm.addPass(createVectorizePackedMatmuls(matmuls));
    pm.addPass(createVectorizeElementwise(
        VectorizeElementwiseOptions{tile.vectorWidth, options.bf16Dot}));
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
}

void mlir::recur::buildLowerLoopsToLLVMPipeline(
    OpPassManager &pm, const CpuPipelineOptions &options) {
  // Requested first: the OpenMP conversion already turns func.func into
  // llvm.func.
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  buildCpuTileAndVectorizePipeline(pm, options);
  // One thread team per time loop rather than one per step.
  if (options.openmp)
    pm.addPass(createPersistentParallelLoops());
  // Keeps compile time linear in the number of layers (the OpenMP
  // translation analyses a parallel region's whole function), and compiles
  // the loops of layers of one shape once.
  pm.addPass(createOutlineParallelLoops());
  // After outlining, so that layers of one shape share the work.
  // exp and tanh inline instead of libm calls in every cell update.
  pm.addPass(createApproximateMath());
  // No libgcc bf16 helper on CPUs without AVX512-BF16.
  pm.addPass(createExpandBf16Conversions());
  if (options.openmp)
    pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createExpandShapesBySizes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // memref.alloca_scope (from the OpenMP conversion) must be lowered while its
  // region is still a single block, i.e. before scf becomes cf.
  // x86vector: the bf16 kernels' dot products (vdpbf16ps).
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = options.bf16Dot;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Vector lowerings start from poison (the CUDA emulator's MMAs).
  pm.addPass(createUBToLLVMConversionPass());
  if (options.openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::recur::buildLowerToCpuPipeline(OpPassManager &pm,
                                          const CpuPipelineOptions &options) {
  buildFusionPipeline(pm, options.fusion, options.gemmTile(),
                      options.precision == Precision::bf16,
                      options.inputShapes);
  buildCpuBackEndPipeline(pm, options);
}

void mlir::recur::buildCpuBackEndPipeline(OpPassManager &pm,
                                          const CpuPipelineOptions &options) {
  buildConvertRecurPipeline(pm);
  // A training step's backward GEMMs, in the form the kernels take (at
  // --fusion=none, which packs nothing, those already in it).
  if (CpuGemmTile tile = options.gemmTile(); tile.enabled())
    pm.addNestedPass<func::FuncOp>(
        createPackGemmOperands(PackGemmOperandsOptions{
            tile.columns, options.fusion > FusionLevel::none}));
  buildBufferizePipeline(pm, /*hoistStepBuffers=*/true);
  buildLowerLoopsToLLVMPipeline(pm, options);
}

std::string mlir::recur::CudaPipelineOptions::defaultCudaToolkit() {
  return RECUR_CUDA_TOOLKIT_DIR;
}

/// recur-gpu-map-loops with or without the GEMM library calls
/// (`libraryGemms`), which only the device can run.
static void buildMapLoopsToLaunchesPipeline(OpPassManager &pm,
                                            const CudaPipelineOptions &options,
                                            bool libraryGemms) {
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // The embedding gradient's scf.forall tasks become threads.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createLowerCopiesToLinalg());
  pm.addPass(createLinalgGeneralizeNamedOpsPass());
  if (libraryGemms)
    pm.addPass(
        createGpuLibraryGemms(GpuLibraryGemmsOptions{options.precision}));
  // The kernels' choices, as configs on the ops they are for.
  GpuKernelConfigOptions config;
  config.precision = options.precision;
  config.tiledGemms = options.tiledGemms;
  config.stationaryWeights = options.stationaryWeights;
  config.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createGpuKernelConfig(config));
  pm.addNestedPass<func::FuncOp>(createGpuTiledGemms());
  pm.addPass(createAddUnitParallelDims());
  pm.addNestedPass<func::FuncOp>(createGpuStationaryWeights());
  pm.addNestedPass<func::FuncOp>(createGpuRowGroups());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCollapseParallelLoops());
  pm.addNestedPass<func::FuncOp>(createGpuTileParallelLoops(
      GpuTileParallelLoopsOptions{options.blockSize}));
  // One kernel per time loop rather than one per parallel loop per step.
  if (options.persistent)
    pm.addNestedPass<func::FuncOp>(createGpuPersistentKernels(
        GpuPersistentKernelsOptions{options.blockSize}));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createGpuWorkgroupAttributions());
}

void mlir::recur::buildGpuMapLoopsPipeline(OpPassManager &pm,
                                           const CudaPipelineOptions &options) {
  buildMapLoopsToLaunchesPipeline(pm, options,
                                  options.gemm == GemmLowering::cublaslt);
}

void mlir::recur::buildGpuOutlineKernelsPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createGpuDeviceMemory());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createGpuAlignWorkgroupMemory());
  pm.addNestedPass<gpu::GPUModuleOp>(createGpuPersistentRegisterBudget());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::recur::buildMapToGpuPipeline(OpPassManager &pm,
                                        const CudaPipelineOptions &options) {
  buildGpuMapLoopsPipeline(pm, options);
  buildGpuOutlineKernelsPipeline(pm, options);
}

// The steps of upstream's gpu-lower-to-nvvm-pipeline, with the CUDA toolkit
// given explicitly rather than taken from the environment.
void mlir::recur::buildLowerGpuToNVVMPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  // Tensor-core MMAs; upstream's conversion rejects bf16 ones.
  pm.addNestedPass<gpu::GPUModuleOp>(createGpuBf16MmaToNVVM());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createExpandShapesBySizes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.format;
  // Where nvcc puts device code, so CUDA's tools (cuobjdump, compute-sanitizer,
  // nsight) find the kernels in a compiled model.
  binary.elfSection = ".nv_fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::recur::buildLowerToCudaPipeline(OpPassManager &pm,
                                           const CudaPipelineOptions &options) {
  buildFusionPipeline(pm, options.fusion, {}, false, options.inputShapes,
                      kGpuWavefrontMaxLayers,
                      /*activeRowProducts=*/false, /*cellUnitSteps=*/true);
  buildCudaBackEndPipeline(pm, options);
}

void mlir::recur::buildCudaBackEndPipeline(OpPassManager &pm,
                                           const CudaPipelineOptions &options) {
  buildConvertRecurPipeline(pm, /*forGpu=*/true);
  buildBufferizePipeline(pm, /*hoistStepBuffers=*/true);
  buildMapToGpuPipeline(pm, options);
  buildLowerGpuToNVVMPipeline(pm, options);
}

void mlir::recur::buildCudaEmulatorBackEndPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  buildConvertRecurPipeline(pm, /*forGpu=*/true);
  buildBufferizePipeline(pm, /*hoistStepBuffers=*/true);
  buildMapLoopsToLaunchesPipeline(pm, options, /*libraryGemms=*/false);
  pm.addPass(createGpuEmulateLaunches());
  pm.addPass(createCanonicalizerPass());
  // The kernels hold every loop nest: no GEMM tile for the host.
  CpuPipelineOptions cpu;
  cpu.fusion = options.fusion;
  buildLowerLoopsToLLVMPipeline(pm, cpu);
}

void mlir::recur::buildLowerToCudaEmulatorPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  buildFusionPipeline(pm, options.fusion, {}, false, options.inputShapes,
                      kGpuWavefrontMaxLayers,
                      /*activeRowProducts=*/false, /*cellUnitSteps=*/true);
  buildCudaEmulatorBackEndPipeline(pm, options);
}

void mlir::recur::registerRecurPipelines() {
  PassPipelineRegistration<FusionPipelineOptions>(
      "recur-fusion",
      "recur-generalize-cells, then the recur -> recur loop-fusion stages "
      "up to a level: "
      "recur-hoist-input-projection and recur-fold-embedding-projection "
      "(hoist), recur-fuse-cell-pointwise, recur-fuse-lstm-cell and "
      "recur-fuse-cell-step (cell; without the CPU's GEMM tile, its remarks "
      "only), "
      "recur-wavefront (wavefront); then recur-outline-weight-prologue",
      [](OpPassManager &pm, const FusionPipelineOptions &options) {
        buildFusionPipeline(pm, options.fusion, {}, false, options.inputShapes,
                            options.wavefrontMaxLayers);
      });
  PassPipelineRegistration<>(
      "recur-bufferize",
      "One-shot bufferization of a lowered recur module, with deallocation",
      [](OpPassManager &pm) { buildBufferizePipeline(pm); });
  PassPipelineRegistration<CpuPipelineOptions>(
      "recur-cpu-tile-and-vectorize",
      "Bufferized linalg to loops: GEMMs of packed weights as register "
      "tiles of vector FMAs (recur-vectorize-packed-matmuls), elementwise "
      "ops and row reductions on vectors (recur-vectorize-elementwise), "
      "the rest as parallel loops; a stage of recur-lower-loops-to-llvm",
      buildCpuTileAndVectorizePipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "recur-lower-loops-to-llvm",
      "Bufferized linalg to (OpenMP-)parallel loops and the LLVM dialect: "
      "recur-cpu-tile-and-vectorize, one thread team per time loop, "
      "outlined parallel regions, the LLVM dialect",
      buildLowerLoopsToLLVMPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "recur-lower-to-cpu",
      "recur ops to the LLVM dialect for the CPU: recur-fusion, "
      "convert-recur-to-linalg, recur-bufferize, recur-lower-loops-to-llvm",
      buildLowerToCpuPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-gpu-map-loops",
      "Bufferized linalg to gpu.launch ops in the host functions: tiled "
      "GEMMs, stationary-weight steps, 1-D blocks of block-size threads, "
      "persistent kernels; a stage of recur-map-to-gpu",
      buildGpuMapLoopsPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-gpu-outline-kernels",
      "gpu.launch ops to gpu.launch_func of kernels in a gpu.module, on "
      "device buffers, asynchronous on one stream; a stage of "
      "recur-map-to-gpu",
      buildGpuOutlineKernelsPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-map-to-gpu",
      "Bufferized linalg to 1-D gpu.launch_func kernels on device buffers: "
      "recur-gpu-map-loops, recur-gpu-outline-kernels",
      buildMapToGpuPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-lower-gpu-to-nvvm",
      "Kernels to NVVM and a gpu.binary; host code to the LLVM dialect",
      buildLowerGpuToNVVMPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-lower-to-cuda",
      "recur ops to the LLVM dialect with embedded CUDA kernels: "
      "recur-fusion, convert-recur-to-linalg, recur-bufferize, "
      "recur-map-to-gpu, recur-lower-gpu-to-nvvm",
      buildLowerToCudaPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "recur-lower-to-cuda-emulator",
      "recur ops to the LLVM dialect for the CPU through the CUDA pipeline's "
      "kernels: recur-fusion, convert-recur-to-linalg, recur-bufferize, "
      "recur-map-to-gpu's mapping to gpu.launch, recur-gpu-emulate-launches, "
      "recur-lower-loops-to-llvm",
      buildLowerToCudaEmulatorPipeline);
}
