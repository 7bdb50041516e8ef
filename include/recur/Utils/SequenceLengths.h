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

/// The rows with a step at time `t` of a batch sorted by length: their
/// count, min(counts[t], B) (the bound recur-allocate-at-bound needs).
Value activeRows(OpBuilder &b, Location loc, Value counts, Value t,
                 OpFoldResult batch);

} // namespace mlir::recur

#endif // RECUR_UTILS_SEQUENCELENGTHS_H
