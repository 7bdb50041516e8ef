//===- SequenceLengths.h - the active rows of a packed batch ----*- C++ -*-===//
//
// A batch whose rows are sorted by length, longest first (recur.rnn's
// `sorted`), has a prefix of rows with a step at each time: what the
// lowering of its steps and of the products around them computes.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_SEQUENCELENGTHS_H
#define RECUR_UTILS_SEQUENCELENGTHS_H

#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// The number of rows with a step at each time, [T] i64: active[t] =
/// #{b : t < lengths[b]}. With lengths sorted (recur.rnn's
/// `sorted`), those rows are the first ones.
Value activeRowCounts(OpBuilder &b, Location loc, Value lengths,
                      OpFoldResult steps);

/// The tokens of the steps before each time, [T] i64: before[t] =
/// sum_b min(lengths[b], t), the position of step t's first token when a
/// packed batch's tokens are numbered step by step (PackedSequence's order).
Value tokensBeforeSteps(OpBuilder &b, Location loc, Value lengths,
                        OpFoldResult steps);

/// `acc[t, b, n] += sum_k x[t, b, k] * w[n, k]` for the rows with
/// t < lengths[b] only, a packed batch's tokens (the others keep acc's
/// value): a linalg.generic marked recur.active_rows, with the helpers by
/// which the GPU's tiled kernels walk the tokens alone as its last inputs:
/// `tokensBefore` (tokensBeforeSteps) and, unless the rows are sorted by
/// length, `order` [B] i64, the rows in order of decreasing length (the
/// tokens of step t are then rows order[0], order[1], ...). x, w and acc are
/// f32.
Value activeRowsMatmulTransposed(OpBuilder &b, Location loc, Value x, Value w,
                                 Value lengths, Value tokensBefore, Value order,
                                 Value acc);

/// The rows with a step at time `t` of a batch sorted by length: their
/// count, min(counts[t], B) (the bound recur-allocate-at-bound needs).
Value activeRows(OpBuilder &b, Location loc, Value counts, Value t,
                 OpFoldResult batch);

} // namespace mlir::recur

#endif // RECUR_UTILS_SEQUENCELENGTHS_H
