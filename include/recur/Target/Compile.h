//===- Compile.h - ahead-of-time compilation of recur models ----*- C++ -*-===//

#ifndef RECUR_TARGET_COMPILE_H
#define RECUR_TARGET_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "recur/Target/TargetConfig.h"

namespace mlir::recur {

/// Lowers `module` (recur dialect, entry @forward) in place and writes the
/// requested artifact to `outputPath`; returns the decisions the compile
/// took. Errors are reported as diagnostics.
FailureOr<TargetConfig> compileModel(ModuleOp module,
                                     const CompileOptions &options,
                                     StringRef outputPath);

} // namespace mlir::recur

#endif // RECUR_TARGET_COMPILE_H
