//===- SplitLast.h - a tensor's last dimension as several -------*- C++ -*-===//
//
// The views the fused steps read their gates through: a row of G gates of H
// units, [d..., G H], as [d..., H / K, G, K] tiles of K units (the LSTM's
// fused step in the conversion, a recur.rnn cell's in recur-fuse-cell-step).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_SPLITLAST_H
#define RECUR_UTILS_SPLITLAST_H

#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// `value` [d..., N] as [d..., parts...] (a tensor.expand_shape; N = the
/// parts' product).
Value splitLast(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> parts);

/// The inverse of splitLast: the last `parts` dimensions as one (a
/// tensor.collapse_shape).
Value joinLast(OpBuilder &b, Location loc, Value value, int64_t parts);

} // namespace mlir::recur

#endif // RECUR_UTILS_SPLITLAST_H
