//===- TargetConfig.h - every lowering decision of a compile ----*- C++ -*-===//
//
// A compile's options (CompileOptions, what the user asked for) resolve once,
// against the target's features and the model, into a TargetConfig: the
// fusion level, the precision, the CPU's GEMM register tile, the GPU's
// lowering choices. The pipelines are built from it, and the model's
// description records it.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TARGET_TARGETCONFIG_H
#define RECUR_TARGET_TARGETCONFIG_H

#include "recur/Pipelines/Pipelines.h"

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::recur {

/// Where a model runs.
enum class Target {
  cpu,
  cuda,
  /// The CUDA pipeline's kernels compiled for the CPU, a block as an OpenMP
  /// team (recur-lower-to-cuda-emulator): a CPU model for testing them
  /// without a GPU.
  cudaEmulator,
};
llvm::StringRef stringifyTarget(Target target);
/// cpu, cuda or cuda-emulator.
std::optional<Target> symbolizeTarget(llvm::StringRef name);

std::optional<GemmLowering> symbolizeGemmLowering(llvm::StringRef name);

/// How far recur-compile goes.
enum class EmitKind {
  Mlir,         // LLVM-dialect MLIR after the lowering pipeline
  Ptx,          // the kernels' PTX (cuda target only)
  LlvmIr,       // optimized LLVM IR with the runtime ABI added
  Object,       // relocatable object file
  SharedLibrary // what the runtime loads
};

/// What a compile is asked for (recur-compile's flags).
struct CompileOptions {
  Target target = Target::cpu;
  /// LLVM CPU name (for the host code too), or "native" for the machine
  /// compiling.
  std::string cpu = "native";
  /// GPU architecture of the cubin (the fatbin also carries its PTX).
  std::string cudaArch = "sm_90";
  bool openmp = true;
  /// CUDA: each time loop as one persistent kernel (recur-gpu-persistent-
  /// kernels); false: a kernel per parallel loop per step.
  bool persistentKernels = true;
  /// CUDA: GEMMs outside time loops as tiled kernels (recur-gpu-tiled-gemms);
  /// false: a thread per output element.
  bool tiledGemms = true;
  /// CUDA: fused LSTM steps with their weights in shared memory
  /// (recur-gpu-stationary-weights); false: mapped like any loop nest.
  bool stationaryWeights = true;
  /// The products' precision; unset: the target's default for the model
  /// (TargetConfig::resolve).
  std::optional<Precision> precision;
  /// CUDA: the GEMMs outside time loops as generated kernels or cuBLASLt
  /// calls.
  GemmLowering gemm = GemmLowering::generated;
  /// Loop fusion before lowering (recur-fusion); unset: the target's
  /// default (TargetConfig::resolve).
  std::optional<FusionLevel> fusion;
  /// Static shapes fixed for named inputs before fusion, NAME=D0xD1x...
  /// (recur-specialize-shapes): a model for those sizes only.
  std::vector<std::string> inputShapes;
  EmitKind emit = EmitKind::SharedLibrary;
};

/// Checks `options` alone (CPU and GPU names, combinations of options),
/// before any IR is read; returns the message of the first problem, or ""
/// if none.
std::string checkCompileOptions(const CompileOptions &options);

/// The LLVM target machine for the host code of a model compiled for `cpu`
/// (an LLVM CPU name, or "native"), or null with `error` set.
std::unique_ptr<llvm::TargetMachine> createHostMachine(llvm::StringRef cpu,
                                                       std::string &error);

/// One compile's lowering decisions.
struct TargetConfig {
  Target target = Target::cpu;
  FusionLevel fusion = FusionLevel::wavefront;
  Precision precision = Precision::fp32;
  /// Named inputs' static shapes, fixed before fusion.
  std::vector<std::string> inputShapes;

  /// The host CPU (LLVM name or "native") that the model's code (a GPU
  /// model's host code) runs on.
  std::string cpu = "native";
  /// The CPU's GEMM register tile (from its vector registers); none where
  /// GPU kernels run every loop nest (cuda, cuda-emulator).
  CpuGemmTile gemmTile;
  /// The CPU has AVX512-BF16 and the model is bf16: dot products of bf16
  /// pairs, bf16 conversions on vectors.
  bool bf16Dot = false;
  bool openmp = true;

  std::string cudaArch = "sm_90";
  GemmLowering gemm = GemmLowering::generated;
  bool persistentKernels = true;
  bool tiledGemms = true;
  bool stationaryWeights = true;
  /// The kernels' PTX text rather than a fatbin (recur-compile --emit=ptx).
  bool ptx = false;

  /// `options` with every default decided, for a model that is `bf16Model`
  /// (a bf16 argument or result: its products default to bf16 where the
  /// target has them), on `host`, the target machine of options.cpu.
  static llvm::Expected<TargetConfig> resolve(const CompileOptions &options,
                                              bool bf16Model,
                                              const llvm::TargetMachine &host);

  /// The pipeline runs the CUDA pipeline's kernels (cuda, cuda-emulator).
  bool gpuKernels() const { return target != Target::cpu; }
  /// The fusion level a target without a --fusion flag uses: `wavefront` where
  /// GPU kernels run and where the CPU has no vector GEMM kernels; `cell`
  /// on CPUs that have them, whose fused step runs as a register tile
  /// while the wavefront's is still a scalar loop nest.
  static FusionLevel defaultFusion(Target target, const CpuGemmTile &tile);

  /// Where the model's code runs, as its description says: the emulator's
  /// models are CPU models.
  llvm::StringRef describedTarget() const;

  /// recur-fusion, then the back end: together, the registered pipeline
  /// pipeline() names.
  void buildFusionPipeline(OpPassManager &pm) const;
  void buildBackEndPipeline(OpPassManager &pm) const;
  /// The registered pipeline (recur-lower-to-cpu, recur-lower-to-cuda or
  /// recur-lower-to-cuda-emulator) with its options, printed by MLIR: what
  /// `recur-opt --pass-pipeline='builtin.module(...)'` takes to run it.
  std::string pipeline() const;

private:
  void fill(CpuPipelineOptions &options) const;
  void fill(CudaPipelineOptions &options) const;
};

} // namespace mlir::recur

#endif // RECUR_TARGET_TARGETCONFIG_H
