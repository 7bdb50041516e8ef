//===- ModelDescription.h - what a compiled model expects -------*- C++ -*-===//
//
// A compiled model carries a JSON description of its entry point: every input,
// weight and output with its name, dtype and shape (-1 where dynamic), and
// "dims" naming each dynamic size T or B: dimensions 0 and 1 of time-major
// tensors, dimension 0 of initial LSTM states [B, H]. The runtime validates
// every tensor against it. docs/runtime.md specifies the format.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TARGET_MODELDESCRIPTION_H
#define RECUR_TARGET_MODELDESCRIPTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::recur {

/// Name of the entry function a model is compiled from.
constexpr const char *kModelEntryName = "forward";

/// Describes `entry` as JSON, or emits a diagnostic on the function when its
/// signature cannot be called through the runtime (an unnamed argument, a
/// weight with a dynamic shape, a dynamic dimension other than T and B, an
/// unsupported element type).
/// `compiled` is the entry after loop fusion (or null): the tensors it takes
/// beyond `entry`'s arguments are described as "derived", with the
/// "prologue" that computes them from weights. `fusion` is the loop-fusion
/// level the pipeline ran, `precision` that of its GEMMs' products ("fp32",
/// "tf32", "bf16"); `cudaArch` (e.g. "sm_90") is recorded for the cuda
/// target.
FailureOr<std::string> describeModel(func::FuncOp entry, func::FuncOp compiled,
                                     StringRef target, StringRef pipeline,
                                     StringRef fusion, StringRef precision,
                                     StringRef cudaArch = "");

} // namespace mlir::recur

#endif // RECUR_TARGET_MODELDESCRIPTION_H
