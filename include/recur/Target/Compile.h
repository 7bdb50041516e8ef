//===- Compile.h - ahead-of-time compilation of recur models ----*- C++ -*-===//

#ifndef RECUR_TARGET_COMPILE_H
#define RECUR_TARGET_COMPILE_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::recur {

/// How far recur-compile goes.
enum class EmitKind {
  Mlir,         // LLVM-dialect MLIR after the lowering pipeline
  LlvmIr,       // optimized LLVM IR with the runtime ABI added
  Object,       // relocatable object file
  SharedLibrary // what the runtime loads
};

struct CompileOptions {
  std::string target = "cpu";
  /// LLVM CPU name, or "native" for the machine compiling.
  std::string cpu = "native";
  bool openmp = true;
  EmitKind emit = EmitKind::SharedLibrary;
};

/// Lowers `module` (recur dialect, entry @forward) in place and writes the
/// requested artifact to `outputPath`. Errors are reported as diagnostics.
LogicalResult compileModel(ModuleOp module, const CompileOptions &options,
                           StringRef outputPath);

} // namespace mlir::recur

#endif // RECUR_TARGET_COMPILE_H
