//===- GateSums.h - a unit's gate sums over k, in registers -----*- C++ -*-===//
//
// The inner loop of a fused step (recur.unit_step): one iteration per batch
// row and hidden unit sums the products of its gates' weight rows with a row
// of the activations, every gate at once, as the LSTM's fused step in the
// conversion and a recur.rnn cell's in recur-fuse-cell-step build it.
// recur-gpu-stationary-weights recognizes the loop this builds.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_GATESUMS_H
#define RECUR_UTILS_GATESUMS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// Reductions may be reassociated so that LLVM vectorizes them.
arith::FastMathFlagsAttr reassociable(MLIRContext *context);

/// A product added to a unit's gate sums: for every gate g,
/// Σ_k x[leading..., k] · w[rows[g], k] over w's columns k.
struct GateProduct {
  Value x;
  SmallVector<Value, 2> leading;
  Value w;
};

/// `sums` (one per gate of a unit: `rows` are the gates' rows of the
/// weight) plus `product`, summed over k in registers by one scf.for.
SmallVector<Value> accumulateGates(OpBuilder &b, Location loc, ValueRange sums,
                                   ArrayRef<Value> rows,
                                   const GateProduct &product);

} // namespace mlir::recur

#endif // RECUR_UTILS_GATESUMS_H
