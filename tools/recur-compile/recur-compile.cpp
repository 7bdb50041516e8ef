//===- recur-compile.cpp - AOT-compile a recur model to a shared library --===//
//
//   recur-compile model.mlir --target=cpu [--cpu=native] [--emit=lib] \
//                 [--fusion=none|hoist|cell|wavefront] [--no-openmp]
//                 [--precision=fp32|bf16] -o libmodel.so
//   recur-compile model.mlir --target=cuda [--cuda-arch=sm_90]
//                 [--no-persistent-kernels] [--no-tiled-gemms]
//                 [--no-stationary-weights] [--precision=fp32|tf32|bf16]
//                 [--gemm=generated|cublaslt] -o libmodel.so
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "recur/InitAll.h"
#include "recur/Support/NestingLimit.h"
#include "recur/Target/Compile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace llvm;
using namespace mlir::recur;

// --help lists these; LLVM's backend options stay accepted but hidden.
static cl::OptionCategory compileCategory("recur-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::init("-"),
                                          cl::cat(compileCategory));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::Required,
                                           cl::cat(compileCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu; cuda (NVIDIA GPUs: kernels in an "
                    "embedded fatbin, host code for --cpu); or cuda-emulator "
                    "(the cuda target's kernels run on the CPU, a block as "
                    "an OpenMP team: for testing them without a GPU)"),
           cl::init("cpu"), cl::cat(compileCategory));
static cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("GPU architecture for --target=cuda (default sm_90); "
                      "the fatbin carries its cubin and PTX"),
             cl::init("sm_90"), cl::cat(compileCategory));
static cl::opt<std::string>
    cpu("cpu", cl::desc("Target CPU (LLVM name, default: this machine's)"),
        cl::init("native"), cl::cat(compileCategory));
static cl::opt<bool>
    noOpenmp("no-openmp",
             cl::desc("Single-threaded code that does not link libomp"),
             cl::cat(compileCategory));
static cl::opt<bool> noPersistentKernels(
    "no-persistent-kernels",
    cl::desc("--target=cuda: a kernel launch per parallel loop per time step "
             "instead of one persistent kernel per time loop (cooperative "
             "launch, grid barrier between steps)"),
    cl::cat(compileCategory));
static cl::opt<bool> noTiledGemms(
    "no-tiled-gemms",
    cl::desc("--target=cuda: GEMMs outside time loops with a thread per "
             "output element instead of shared-memory, register-tiled "
             "kernels"),
    cl::cat(compileCategory));
static cl::opt<bool> noStationaryWeights(
    "no-stationary-weights",
    cl::desc("--target=cuda: fused LSTM steps mapped like any loop nest, "
             "reading the weights from L2 at every step, instead of blocks "
             "that own groups of hidden units with their weights in shared "
             "memory"),
    cl::cat(compileCategory));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("The products of the GEMMs and of the recurrence's steps: fp32 "
             "(strict), tf32 (CUDA tensor cores, like PyTorch's allow_tf32) "
             "or bf16 (bf16 operands: CUDA tensor cores, or the CPU's GEMM "
             "kernels, with AVX512-BF16 dot products where the CPU has "
             "them); sums in f32. Default: bf16 for a bf16 model on CUDA or "
             "on a CPU with AVX512-BF16, else fp32"),
    cl::value_desc("fp32|tf32|bf16"), cl::cat(compileCategory));
static cl::opt<std::string> gemm(
    "gemm",
    cl::desc("--target=cuda: the GEMMs outside time loops (the vocabulary "
             "projection, the prologue's input projections) as generated "
             "kernels (default) or as cuBLASLt calls, which the runtime loads "
             "on first use; the recurrence is always generated"),
    cl::value_desc("generated|cublaslt"), cl::init("generated"),
    cl::cat(compileCategory));
static cl::opt<EmitKind> emit(
    "emit", cl::desc("What to write"), cl::init(EmitKind::SharedLibrary),
    cl::values(clEnumValN(EmitKind::Mlir, "mlir",
                          "LLVM-dialect MLIR after recur-lower-to-cpu/cuda"),
               clEnumValN(EmitKind::Ptx, "ptx",
                          "The kernels' PTX (--target=cuda)"),
               clEnumValN(EmitKind::LlvmIr, "llvm", "Optimized LLVM IR"),
               clEnumValN(EmitKind::Object, "obj", "Object file"),
               clEnumValN(EmitKind::SharedLibrary, "lib",
                          "Shared library for librecur-runtime (default)")),
    cl::cat(compileCategory));
static cl::opt<FusionLevel>
    fusion("fusion",
           cl::desc("Loop fusion before lowering; each level includes the "
                    "ones before it (default: cell on CPUs with vector GEMM "
                    "kernels, wavefront elsewhere)"),
           cl::init(FusionLevel::wavefront), RECUR_FUSION_LEVEL_VALUES,
           cl::cat(compileCategory));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Fix a named input's sizes before fusion, NAME=D0xD1x... (e.g. "
             "tokens=50x128; repeatable): a model for those sizes only"),
    cl::value_desc("NAME=SIZES"), cl::cat(compileCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing on success"),
                           cl::cat(compileCategory));
static cl::opt<bool> printRemarks(
    "remarks",
    cl::desc("Print a remark, with the op's location, wherever the compiler "
             "leaves an op to a slower form than its fast path (a plain loop "
             "nest, SIMT instead of tensor cores, an unfused layer) and why"),
    cl::cat(compileCategory));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Recur ahead-of-time compiler: recur IR to a shared library\n");
  auto start = std::chrono::steady_clock::now();

  // Option mistakes are reported alone, before any IR is read.
  auto optionError = [](const Twine &message) {
    WithColor::error(errs(), "recur-compile") << message << "\n";
    return 1;
  };
  CompileOptions options;
  std::optional<mlir::recur::Target> targetKind = symbolizeTarget(target);
  if (!targetKind)
    return optionError("unknown target '" + target +
                       "'; expected cpu, cuda or cuda-emulator");
  options.target = *targetKind;
  options.cpu = cpu;
  options.cudaArch = cudaArch;
  options.openmp = !noOpenmp;
  options.persistentKernels = !noPersistentKernels;
  options.tiledGemms = !noTiledGemms;
  options.stationaryWeights = !noStationaryWeights;
  if (fusion.getNumOccurrences())
    options.fusion = fusion;
  if (precision.getNumOccurrences()) {
    options.precision = symbolizePrecision(precision);
    if (!options.precision)
      return optionError("unknown --precision '" + precision +
                         "'; expected fp32, tf32 or bf16");
  }
  std::optional<GemmLowering> gemmLowering = symbolizeGemmLowering(gemm);
  if (!gemmLowering)
    return optionError("unknown --gemm '" + gemm +
                       "'; expected generated or cublaslt");
  options.gemm = *gemmLowering;
  options.emit = emit;
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  if (std::string message = checkCompileOptions(options); !message.empty())
    return optionError(message);

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name a location; the whole module after them is noise.
  context.printOpOnDiagnostic(false);
  if (printRemarks) {
    mlir::remark::RemarkCategories missed;
    missed.missed = ".*";
    if (mlir::failed(mlir::remark::enableOptimizationRemarks(
            context, /*streamer=*/nullptr,
            std::make_unique<mlir::remark::RemarkEmittingPolicyAll>(), missed,
            /*printAsEmitRemarks=*/true)))
      return optionError("cannot enable remarks");
  }

  std::string error;
  std::unique_ptr<MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    WithColor::error(errs(), "recur-compile") << error << "\n";
    return 1;
  }
  if (mlir::failed(checkNestingDepth(*input)))
    return 1;
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::FailureOr<TargetConfig> config =
      compileModel(*module, options, outputFilename);
  if (mlir::failed(config))
    return 1;
  if (!quiet) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    outs() << "recur-compile: wrote " << outputFilename << " (target "
           << stringifyTarget(config->target)
           << (config->target == mlir::recur::Target::cuda
                   ? " " + config->cudaArch
                   : "")
           << ", cpu " << config->cpu << ", fusion "
           << stringifyFusionLevel(config->fusion) << ", "
           << format("%.1f", seconds) << " s)\n";
  }
  return 0;
}
