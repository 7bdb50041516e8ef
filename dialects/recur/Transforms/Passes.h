//===- Passes.h - recur -> recur transformations ----------------*- C++ -*-===//

#ifndef RECUR_TRANSFORMS_PASSES_H
#define RECUR_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::recur {

#define GEN_PASS_DECL
#include "recur/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recur/Transforms/Passes.h.inc"

/// Writes the named cell `op` (recur.lstm, recur.gru, recur.rnn_tanh,
/// recur.rnn_relu) as the recur.rnn of its cell (recur-generalize-cells).
void generalizeCell(Operation *op, RewriterBase &rewriter);

} // namespace mlir::recur

#endif // RECUR_TRANSFORMS_PASSES_H
