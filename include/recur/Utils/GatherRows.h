//===- GatherRows.h - rows of a table gathered by integer ids ---*- C++ -*-===//
//
// The gather both nn.Embedding and the length sort are made of:
// result[d..., e] = table[ids[d...], e], a linalg.generic whose body reads
// the table with tensor.extract. The CPU back end runs it as vector row
// copies (recur-vectorize-elementwise's row gather).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_GATHERROWS_H
#define RECUR_UTILS_GATHERROWS_H

#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// Rows of `table` ([V, E]) gathered by `ids` (integers of any shape [d...]):
/// a [d..., E] tensor, written into `into` if given (of that shape). Ids
/// out of [0, V) are the caller's to exclude.
Value gatherRows(OpBuilder &b, Location loc, Value table, Value ids,
                 Value into = Value());

} // namespace mlir::recur

#endif // RECUR_UTILS_GATHERROWS_H
