//===- RowKernels.h - recur-vectorize-elementwise's kernels -----*- C++ -*-===//
//
// The loop nests recur-vectorize-elementwise runs on vectors, each matched
// on buffers and emitted in place of its linalg.generic: row ops (elementwise
// ops and reductions along the last dimension, in groups that share one
// parallel loop over the rows, as ../RowOps.h forms them; RowOps.cpp), row
// gathers (an embedding; RowGather.cpp) and column sums (a bias gradient;
// ColumnSums.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_CPU_ROWKERNELS_H
#define RECUR_LIB_CODEGEN_CPU_ROWKERNELS_H

#include "../RowOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::recur::cpu {

/// An output of a row group that a copy after the group also writes to
/// `target`: the group writes it there too, where `writer` (the last member
/// to write `source`) does, and the copy goes.
struct CopiedOutput {
  Value source, target;
  Operation *writer;
};

/// Replaces `group`'s members with one parallel loop over their rows, each
/// row in vectors along the last dimension; each of `copies`' sources is
/// written to its target too.
void emitRowGroup(RewriterBase &rewriter, RowGroup &group, int64_t vectorWidth,
                  ArrayRef<CopiedOutput> copies = {});

/// `size` elements in vectors of `width` lanes: `body(j, inBounds)` in a loop
/// over the whole vectors, then in one over the partial last one.
void buildVectorLoops(OpBuilder &b, Location loc, Value size, int64_t width,
                      function_ref<void(Value, bool)> body);

/// `eachRow(leading)` in a parallel loop over the rows of `buffer` (the
/// indices of its leading `rank - 1` dimensions), or once when it has none.
void buildRowLoop(OpBuilder &b, Location loc, Value buffer, unsigned rank,
                  function_ref<void(ValueRange)> eachRow);

/// A row gather, the lowering of recur.embedding on buffers:
///   output[rows..., j] = table[index_cast(ids[rows...]), j]
/// with one id per row and rows of the table and the output unit-stride.
struct RowGather {
  linalg::GenericOp op;
  Value ids, table, output;
};

std::optional<RowGather> matchRowGather(linalg::GenericOp op);
/// A parallel loop over the rows; each row's id is loaded once, and the
/// table row is copied in vectors (the partial last one masked).
void emitRowGather(RewriterBase &b, RowGather &gather, int64_t vectorWidth);

/// A sum over the rows of a buffer, `out[n] += in[d..., n]` (a bias
/// gradient): loops (n, d...), n the only parallel one.
struct ColumnSum {
  linalg::GenericOp op;
  Value input, output;
  /// The scalar a `linalg.fill` (then erased) set the output to, or null.
  Value initial;
};

std::optional<ColumnSum> matchColumnSum(linalg::GenericOp op);
/// Columns in chunks of vectors, in parallel, each chunk's sums in
/// registers while the loop walks down the rows.
void emitColumnSum(RewriterBase &b, ColumnSum &sum, int64_t vectorWidth);

} // namespace mlir::recur::cpu

#endif // RECUR_LIB_CODEGEN_CPU_ROWKERNELS_H
