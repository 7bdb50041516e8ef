//===- Compile.h - ahead-of-time compilation of recur models ----*- C++ -*-===//

#ifndef RECUR_TARGET_COMPILE_H
#define RECUR_TARGET_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "recur/Pipelines/Pipelines.h"

#include <optional>
#include <string>

namespace mlir::recur {

/// How far recur-compile goes.
enum class EmitKind {
  Mlir,         // LLVM-dialect MLIR after the lowering pipeline
  Ptx,          // the kernels' PTX (cuda target only)
  LlvmIr,       // optimized LLVM IR with the runtime ABI added
  Object,       // relocatable object file
  SharedLibrary // what the runtime loads
};

/// The target that compiles the CUDA pipeline's kernels for the CPU
/// (recur-lower-to-cuda-emulator): a CPU model for testing them without a GPU.
inline constexpr llvm::StringLiteral kCudaEmulatorTarget = "cuda-emulator";

struct CompileOptions {
  /// "cpu", "cuda", or kCudaEmulatorTarget.
  std::string target = "cpu";
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
  /// The precision of the GEMMs' products: "fp32" (strict), "tf32" (CUDA:
  /// tensor cores) or "bf16" (bf16 operands, f32 sums: tensor cores on
  /// CUDA; on the CPU, the vector GEMM kernels' products, as AVX512-BF16 dot
  /// products where the CPU has them). Unset: "bf16" for a bf16 model on a
  /// CUDA target with tiled GEMMs or a CPU with AVX512-BF16 and vector GEMM
  /// kernels (fusion above none), "fp32" otherwise.
  std::optional<std::string> precision;
  /// CUDA: the GEMMs outside time loops as "generated" kernels or as
  /// "cublaslt" calls, which the runtime runs with cuBLASLt.
  std::string gemm = "generated";
  /// Loop fusion before lowering (recur-fusion); unset: the target's
  /// default (defaultFusionLevel).
  std::optional<FusionLevel> fusion;
  EmitKind emit = EmitKind::SharedLibrary;
};

/// The fusion level a compile without one uses: `all` on the GPU and where
/// the CPU has no vector GEMM kernels; `cell` on CPUs that have them, whose
/// fused step runs as a register tile while the wavefront's is still a
/// scalar loop nest (docs/benchmarks.md).
FusionLevel defaultFusionLevel(const CompileOptions &options);

/// Checks `options` alone (target, CPU and GPU names, emit kind), before any
/// IR is read; returns the message of the first problem, or "" if none.
std::string checkCompileOptions(const CompileOptions &options);

/// Lowers `module` (recur dialect, entry @forward) in place and writes the
/// requested artifact to `outputPath`. Errors are reported as diagnostics.
LogicalResult compileModel(ModuleOp module, const CompileOptions &options,
                           StringRef outputPath);

} // namespace mlir::recur

#endif // RECUR_TARGET_COMPILE_H
