//===- TargetConfig.cpp - every lowering decision of a compile ------------===//

#include "recur/Target/TargetConfig.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::recur;

StringRef mlir::recur::stringifyTarget(Target target) {
  switch (target) {
  case Target::cpu:
    return "cpu";
  case Target::cuda:
    return "cuda";
  case Target::cudaEmulator:
    return "cuda-emulator";
  }
  llvm_unreachable("unknown target");
}

std::optional<Target> mlir::recur::symbolizeTarget(StringRef name) {
  for (Target target : {Target::cpu, Target::cuda, Target::cudaEmulator})
    if (name == stringifyTarget(target))
      return target;
  return std::nullopt;
}

std::optional<GemmLowering> mlir::recur::symbolizeGemmLowering(StringRef name) {
  if (name == "generated")
    return GemmLowering::generated;
  if (name == "cublaslt")
    return GemmLowering::cublaslt;
  return std::nullopt;
}

std::unique_ptr<llvm::TargetMachine>
mlir::recur::createHostMachine(StringRef cpu, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + error;
    return nullptr;
  }
  std::string cpuName = cpu.str(), features;
  // Checked before the target machine exists, which would warn about it.
  if (cpu != "native" && !std::unique_ptr<llvm::MCSubtargetInfo>(
                              target->createMCSubtargetInfo(triple, "", ""))
                              ->isCPUStringValid(cpuName)) {
    error = "unknown CPU '" + cpuName + "' for " + triple.str() +
            " (try --cpu=native or e.g. --cpu=x86-64-v3)";
    return nullptr;
  }
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    SmallVector<std::string> enabled;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      enabled.push_back((feature.second ? "+" : "-") + feature.first().str());
    features = llvm::join(enabled, ",");
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpuName)) {
    error = "unknown CPU '" + cpuName + "' for " + triple.str() +
            " (try --cpu=native or e.g. --cpu=x86-64-v3)";
    return nullptr;
  }
  return machine;
}

namespace {

/// Whether `machine` has AVX512-BF16's dot products of bf16 pairs.
bool hasBf16DotProducts(const llvm::TargetMachine &machine) {
  return machine.getTargetTriple().isX86() &&
         machine.getMCSubtargetInfo()->checkFeatures("+avx512bf16");
}

/// The GEMM register tile for `machine`'s vector registers.
CpuGemmTile gemmTileFor(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo &subtarget = *machine.getMCSubtargetInfo();
  if (machine.getTargetTriple().isX86()) {
    if (subtarget.checkFeatures("+avx512f"))
      return CpuGemmTile::forTarget(16, 32);
    if (subtarget.checkFeatures("+avx"))
      return CpuGemmTile::forTarget(8, 16);
    return CpuGemmTile::forTarget(4, 16); // SSE2, in every x86-64
  }
  if (machine.getTargetTriple().isAArch64())
    return CpuGemmTile::forTarget(4, 32); // NEON
  return {};
}

llvm::Error configError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

std::string mlir::recur::checkCompileOptions(const CompileOptions &options) {
  bool cuda = options.target == Target::cuda;
  if (options.emit == EmitKind::Ptx && !cuda)
    return "--emit=ptx needs --target=cuda";
  if (std::optional<Precision> precision = options.precision) {
    if (*precision == Precision::tf32 && options.target == Target::cpu)
      return "--precision=tf32 needs --target=cuda or cuda-emulator (TF32 "
             "tensor cores); the CPU takes fp32 or bf16";
    if (*precision != Precision::fp32 && !options.tiledGemms)
      return "--precision=" + stringifyPrecision(*precision).str() +
             " runs the GEMMs on tensor cores in the tiled kernels: drop "
             "--no-tiled-gemms";
  }
  if (options.gemm == GemmLowering::cublaslt && !cuda)
    return "--gemm=cublaslt needs --target=cuda: cuBLASLt runs on the GPU "
           "(the CPU and the CUDA emulator run generated code)";
  if (cuda) {
    StringRef arch = options.cudaArch;
    unsigned number;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, number))
      return "--cuda-arch must name an SM architecture such as sm_90, not '" +
             options.cudaArch + "'";
    if (CudaPipelineOptions().toolkit.getValue().empty())
      return "--target=cuda needs the CUDA toolkit (ptxas, fatbinary, "
             "libdevice); none was found when Recur was built";
  }
  std::string error;
  if (!createHostMachine(options.cpu, error))
    return error;
  return "";
}

FusionLevel TargetConfig::defaultFusion(Target target,
                                        const CpuGemmTile &tile) {
  return target == Target::cpu && tile.enabled() ? FusionLevel::cell
                                                 : FusionLevel::wavefront;
}

llvm::Expected<TargetConfig>
TargetConfig::resolve(const CompileOptions &options, bool bf16Model,
                      const llvm::TargetMachine &host) {
  TargetConfig config;
  config.target = options.target;
  config.cpu = options.cpu;
  config.cudaArch = options.cudaArch;
  config.gemm = options.gemm;
  config.persistentKernels = options.persistentKernels;
  config.tiledGemms = options.tiledGemms;
  config.stationaryWeights = options.stationaryWeights;
  config.ptx = options.emit == EmitKind::Ptx;
  config.inputShapes = options.inputShapes;
  bool gpu = config.gpuKernels();
  // The GPU's kernels run every loop nest; host code has no GEMM.
  if (!gpu)
    config.gemmTile = gemmTileFor(host);
  config.fusion =
      options.fusion.value_or(defaultFusion(config.target, config.gemmTile));
  // The emulator's blocks are OpenMP teams whatever --no-openmp says.
  config.openmp = options.openmp && config.target != Target::cuda;
  // The CPU's bf16 products are those of its vector GEMM kernels, on the
  // weights that fusion packs.
  bool cpuKernels =
      !gpu && config.gemmTile.enabled() && config.fusion > FusionLevel::none;
  // AVX512-BF16 matters to a bf16 model only (dot products, conversions).
  config.bf16Dot = bf16Model && !gpu && hasBf16DotProducts(host);
  // A bf16 model's products take bf16 operands by default, as PyTorch's do.
  bool bf16Products =
      (gpu && options.tiledGemms) || (cpuKernels && config.bf16Dot);
  config.precision = options.precision.value_or(
      bf16Model && bf16Products ? Precision::bf16 : Precision::fp32);
  if (config.precision == Precision::bf16 && !bf16Model)
    return configError(Twine("--precision=bf16 needs a bf16 model (recur-gen "
                             "--dtype bf16); an f32 model takes fp32") +
                       (gpu ? " or tf32" : ""));
  if (config.precision == Precision::bf16 && !gpu && !cpuKernels)
    return configError("--precision=bf16 on the CPU runs the vector GEMM "
                       "kernels' products in bf16: it needs --fusion above "
                       "none and a CPU with vector registers");
  return config;
}

StringRef TargetConfig::describedTarget() const {
  return target == Target::cuda ? "cuda" : "cpu";
}

void TargetConfig::fill(CpuPipelineOptions &options) const {
  options.fusion = fusion;
  options.inputShapes = inputShapes;
  options.openmp = openmp;
  options.vectorWidth = gemmTile.vectorWidth;
  options.vectorRegisters = gemmTile.vectorRegisters;
  options.precision = precision;
  options.bf16Dot = bf16Dot;
}

void TargetConfig::fill(CudaPipelineOptions &options) const {
  options.fusion = fusion;
  options.inputShapes = inputShapes;
  options.chip = cudaArch;
  options.persistent = persistentKernels;
  options.tiledGemms = tiledGemms;
  options.stationaryWeights = stationaryWeights;
  options.precision = precision;
  options.gemm = gemm;
  if (ptx)
    options.format = "isa";
}

void TargetConfig::buildFusionPipeline(OpPassManager &pm) const {
  // As the registered pipelines build it from their options.
  mlir::recur::buildFusionPipeline(pm, fusion, gemmTile,
                                   precision == Precision::bf16, inputShapes,
                                   gpuKernels() ? kGpuWavefrontMaxLayers : 0,
                                   /*activeRowProducts=*/!gpuKernels(),
                                   /*cellUnitSteps=*/gpuKernels());
}

void TargetConfig::buildBackEndPipeline(OpPassManager &pm) const {
  if (!gpuKernels()) {
    CpuPipelineOptions options;
    fill(options);
    return buildCpuBackEndPipeline(pm, options);
  }
  CudaPipelineOptions options;
  fill(options);
  if (target == Target::cudaEmulator)
    return buildCudaEmulatorBackEndPipeline(pm, options);
  buildCudaBackEndPipeline(pm, options);
}

std::string TargetConfig::pipeline() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!gpuKernels()) {
    CpuPipelineOptions options;
    fill(options);
    os << "recur-lower-to-cpu";
    options.print(os);
    return text;
  }
  CudaPipelineOptions options;
  fill(options);
  os << (target == Target::cuda ? "recur-lower-to-cuda"
                                : "recur-lower-to-cuda-emulator");
  options.print(os);
  return text;
}
