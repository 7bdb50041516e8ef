//===- Pipelines.h - Recur's pass pipelines ---------------------*- C++ -*-===//
//
// The stages from recur ops to LLVM dialect, each a registered pipeline so that
// `recur-opt` can stop after any of them.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_PIPELINES_PIPELINES_H
#define RECUR_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "recur/Codegen/CpuGemmTile.h"
#include "recur/Codegen/Precision.h"

namespace mlir {
class OpPassManager;
namespace recur {

/// How far loop fusion goes; each level includes the ones before it.
enum class FusionLevel {
  none,      // every recur op lowered on its own (the unfused path)
  hoist,     // recur-hoist-input-projection
  cell,      // + recur-fuse-lstm-cell
  wavefront, // + recur-wavefront: every fusion stage
};

/// Every level, in order.
inline constexpr FusionLevel kFusionLevels[] = {
    FusionLevel::none, FusionLevel::hoist, FusionLevel::cell,
    FusionLevel::wavefront};

/// The level's name as recur-compile --fusion spells it.
llvm::StringRef stringifyFusionLevel(FusionLevel level);

/// The levels as command-line values, for the pipelines' `fusion` option and
/// recur-compile's --fusion.
#define RECUR_FUSION_LEVEL_VALUES                                              \
  llvm::cl::values(                                                            \
      clEnumValN(::mlir::recur::FusionLevel::none, "none",                     \
                 "every recur op lowered on its own"),                         \
      clEnumValN(::mlir::recur::FusionLevel::hoist, "hoist",                   \
                 "input projections as one GEMM over all steps (an LM's "      \
                 "first: a gather from a table projected per binding)"),       \
      clEnumValN(::mlir::recur::FusionLevel::cell, "cell",                     \
                 "recurrent GEMM and LSTM cell in one loop nest per step"),    \
      clEnumValN(::mlir::recur::FusionLevel::wavefront, "wavefront",           \
                 "stacked layers as one wavefront of diagonal steps (every "   \
                 "fusion stage)"))

/// The pipeline option every lowering pipeline shares.
#define RECUR_FUSION_OPTION                                                    \
  Option<FusionLevel> fusion {                                                 \
    *this, "fusion",                                                           \
        llvm::cl::desc("Loop fusion before lowering (each level includes "     \
                       "the ones before it)"),                                 \
        llvm::cl::init(FusionLevel::wavefront), RECUR_FUSION_LEVEL_VALUES      \
  }

/// The pipeline option that fixes named inputs' sizes first
/// (recur-specialize-shapes).
#define RECUR_INPUT_SHAPES_OPTION                                              \
  ListOption<std::string> inputShapes {                                        \
    *this, "input-shapes",                                                     \
        llvm::cl::desc("Static shapes of named inputs, NAME=D0xD1x... (e.g. "  \
                       "tokens=50x128), fixed before fusion "                  \
                       "(recur-specialize-shapes)")                            \
  }

struct FusionPipelineOptions
    : public PassPipelineOptions<FusionPipelineOptions> {
  RECUR_FUSION_OPTION;
  RECUR_INPUT_SHAPES_OPTION;
  Option<int64_t> wavefrontMaxLayers{
      *this, "wavefront-max-layers",
      llvm::cl::desc("Most layers in one wavefront (0: any; the GPU "
                     "pipelines' is 16)"),
      llvm::cl::init(0)};
};

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  RECUR_FUSION_OPTION;
  RECUR_INPUT_SHAPES_OPTION;
  Option<bool> openmp{*this, "openmp",
                      llvm::cl::desc("Run parallel loops on OpenMP threads"),
                      llvm::cl::init(true)};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per vector register of the target (16 with "
                     "AVX-512, 8 with AVX2); 0: no packed, vectorized GEMMs"),
      llvm::cl::init(0)};
  Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target (32 with AVX-512, 16 "
                     "with AVX2)"),
      llvm::cl::init(32)};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("The products of the packed GEMMs (the projections, "
                     "each step's recurrent product): fp32, or bf16 (bf16 "
                     "operands, f32 sums)"),
      llvm::cl::init(Precision::fp32), RECUR_PRECISION_VALUES};
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("The target has AVX512-BF16: dot products (vdpbf16ps) "
                     "for precision=bf16 (without, the kernels widen the "
                     "bf16 pairs and multiply in f32) and bf16 conversions "
                     "on vectors"),
      llvm::cl::init(false)};

  /// The GEMM register tile these options ask for.
  CpuGemmTile gemmTile() const {
    return CpuGemmTile::forTarget(vectorWidth, vectorRegisters);
  }
};

/// How a CUDA model computes the GEMMs outside time loops.
enum class GemmLowering { generated, cublaslt };

struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  RECUR_FUSION_OPTION;
  RECUR_INPUT_SHAPES_OPTION;
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture of the cubin"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features, e.g. +ptx80"),
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
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of every kernel"),
                            llvm::cl::init(256)};
  Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("One persistent kernel per time loop (cooperative "
                     "launch, grid barrier after each parallel loop); false: "
                     "a kernel per parallel loop per step"),
      llvm::cl::init(true)};
  Option<bool> tiledGemms{
      *this, "tiled-gemms",
      llvm::cl::desc("GEMMs outside time loops as shared-memory, "
                     "register-tiled kernels (recur-gpu-tiled-gemms); false: "
                     "a thread per output element"),
      llvm::cl::init(true)};
  Option<GemmLowering> gemm{
      *this, "gemm",
      llvm::cl::desc("The GEMMs outside time loops on the device (the "
                     "emulator runs generated kernels)"),
      llvm::cl::init(GemmLowering::generated),
      llvm::cl::values(clEnumValN(GemmLowering::generated, "generated",
                                  "kernels generated by recur-gpu-tiled-gemms"),
                       clEnumValN(GemmLowering::cublaslt, "cublaslt",
                                  "calls the runtime runs with cuBLASLt "
                                  "(recur-gpu-library-gemms)"))};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("The products of the GEMMs outside time loops "
                     "(recur-gpu-tiled-gemms) and of the fused steps "
                     "(recur-gpu-stationary-weights): fp32 (strict), tf32 "
                     "or bf16 (tensor cores, f32 sums)"),
      llvm::cl::init(Precision::fp32), RECUR_PRECISION_VALUES};
  Option<bool> stationaryWeights{
      *this, "stationary-weights",
      llvm::cl::desc("Fused LSTM steps as blocks that own groups of hidden "
                     "units and keep their weights in shared memory "
                     "(recur-gpu-stationary-weights); false: mapped like "
                     "any loop nest"),
      llvm::cl::init(true)};

  static std::string defaultCudaToolkit();
};

/// The most layers of one wavefront on the GPU: its persistent kernel
/// takes each layer's weights as parameters, which PTX bounds at 4 KB (a
/// layer's take about 170 bytes).
inline constexpr int64_t kGpuWavefrontMaxLayers = 16;

/// recur-fusion: recur-specialize-shapes for `inputShapes` (if any), the
/// recur -> recur loop-fusion stages up to `level` (wavefronts of at most
/// `wavefrontMaxLayers` layers, 0: any), then (above `none`)
/// recur-pack-weights for `gemmTile` (none without one; in bf16 pairs for
/// `bf16Products`) and recur-outline-weight-prologue. `activeRowProducts`:
/// recur-sort-by-length runs an LM's output layer step by step on the
/// active rows (the CPU's; the GPU's is one GEMM kernel over every row).
/// `cellUnitSteps`: without `gemmTile`, recur-fuse-cell-step fuses cells
/// into recur.unit_step loop nests, and recur-wavefront stacks only such
/// cells (the GPU's).
void buildFusionPipeline(OpPassManager &pm, FusionLevel level,
                         const CpuGemmTile &gemmTile = {},
                         bool bf16Products = false,
                         ArrayRef<std::string> inputShapes = {},
                         int64_t wavefrontMaxLayers = 0,
                         bool activeRowProducts = true,
                         bool cellUnitSteps = false);

/// convert-recur-to-linalg (and arith on tensors to linalg), canonicalize, cse;
/// `forGpu` picks the forms the GPU mapping takes (a block-parallel
/// embedding gradient).
void buildConvertRecurPipeline(OpPassManager &pm, bool forGpu = false);

/// recur-bufferize: one-shot bufferization of the whole module (function
/// boundaries included, identity layouts) and ownership-based deallocation.
/// `hoistStepBuffers` (every pipeline's) allocates the temporaries of a
/// loop's steps once, before the loop (buffer-loop-hoisting), so that a time
/// loop runs on one thread team (CPU) or as one persistent kernel (GPU).
void buildBufferizePipeline(OpPassManager &pm, bool hoistStepBuffers = false);

/// recur-cpu-tile-and-vectorize: linalg on buffers to loops. GEMMs of packed
/// weights become register tiles of vector FMAs and elementwise ops and row
/// reductions vectors, for the options' GEMM tile (none without one); the
/// rest parallel loops.
void buildCpuTileAndVectorizePipeline(OpPassManager &pm,
                                      const CpuPipelineOptions &options);

/// recur-lower-loops-to-llvm: recur-cpu-tile-and-vectorize, then one thread
/// team per time loop, each parallel region in a function of its own, and
/// everything to the LLVM dialect with C wrappers for the entry points.
void buildLowerLoopsToLLVMPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options);

/// recur-lower-to-cpu: recur-fusion (shared with CUDA),
/// convert-recur-to-linalg, recur-bufferize, recur-lower-loops-to-llvm.
void buildLowerToCpuPipeline(OpPassManager &pm,
                             const CpuPipelineOptions &options);
/// recur-lower-to-cpu after recur-fusion (recur-compile describes the model
/// in between).
void buildCpuBackEndPipeline(OpPassManager &pm,
                             const CpuPipelineOptions &options);

/// recur-gpu-map-loops: bufferized linalg to gpu.launch ops in the host
/// functions (tiled GEMMs, stationary-weight steps, every other loop nest a
/// 1-D grid of `block-size` threads, one persistent launch per time loop):
/// what the device and its emulation on the CPU share.
void buildGpuMapLoopsPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);

/// recur-gpu-outline-kernels: every buffer a launch reads on the device,
/// gpu.launch outlined into gpu.func kernels of a gpu.module (their
/// workgroup memory aligned, persistent kernels given a register budget),
/// GPU operations on the host asynchronous on one stream.
void buildGpuOutlineKernelsPipeline(OpPassManager &pm,
                                    const CudaPipelineOptions &options);

/// recur-map-to-gpu: bufferized linalg to gpu.launch_func kernels:
/// recur-gpu-map-loops, then recur-gpu-outline-kernels.
void buildMapToGpuPipeline(OpPassManager &pm,
                           const CudaPipelineOptions &options);

/// recur-lower-gpu-to-nvvm: kernels to NVVM and a `gpu.binary` (by default a
/// fatbin with the cubin for `chip` and its PTX); host code to the LLVM
/// dialect calling the `mgpu*` runtime functions.
void buildLowerGpuToNVVMPipeline(OpPassManager &pm,
                                 const CudaPipelineOptions &options);

/// recur-lower-to-cuda: recur-fusion (shared with the CPU),
/// convert-recur-to-linalg, recur-bufferize, recur-map-to-gpu,
/// recur-lower-gpu-to-nvvm.
void buildLowerToCudaPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);
/// recur-lower-to-cuda after recur-fusion.
void buildCudaBackEndPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);

/// recur-lower-to-cuda-emulator: the CUDA pipeline's kernels, run on the
/// CPU (recur-gpu-emulate-launches: a block is an OpenMP team) for testing
/// them without a GPU; a CPU model. The chip and binary options are unused.
void buildLowerToCudaEmulatorPipeline(OpPassManager &pm,
                                      const CudaPipelineOptions &options);
/// recur-lower-to-cuda-emulator after recur-fusion.
void buildCudaEmulatorBackEndPipeline(OpPassManager &pm,
                                      const CudaPipelineOptions &options);

void registerRecurPipelines();

} // namespace recur
} // namespace mlir

#endif // RECUR_PIPELINES_PIPELINES_H
