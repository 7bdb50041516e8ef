//===- RowOps.h - row ops and the groups that share their rows -*- C++ -*-===//
//
// Elementwise generics and reductions along the last dimension on buffers
// (row ops), and the groups of consecutive ones whose rows line up, which
// run row by row in one loop over the rows: on the CPU in vectors along the
// row (recur-vectorize-elementwise), on the GPU a block per row
// (recur-gpu-row-groups). What a row op and a group are is the same for
// both; the targets emit them.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_ROWOPS_H
#define RECUR_LIB_CODEGEN_ROWOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::recur {

/// Whether `body` holds only elementwise arith/math ops on f32 (and i1)
/// scalars (and with `bf16Conversions`, conversions between f32 and bf16),
/// and constants: what the CPU's BodyVectorizer can run on vectors, and a
/// GPU thread runs as scalars. With `withIndices`, also `linalg.index` and
/// integer ops on i64 and index values (a one-hot's compare of the column
/// with a row's target), whose caller maps the `linalg.index` results
/// itself.
bool isElementwiseF32Body(Block &body, bool withIndices = false,
                          bool bf16Conversions = false);

/// (d0, ..., d{n-1}) -> (d0, ..., d{n-2}): one value per row; for n = 1,
/// (d0) -> (), the one row's value.
bool isRowMap(AffineMap map);

/// A map that reads along the last loop but not every loop, its results
/// loops in increasing order ending with the last: (d0, d1) -> (d1), a
/// vector over the columns that every row reads (a bias, a layer norm's
/// scale, a peephole weight).
bool isColumnMap(AffineMap map);

/// A reduction along the last dimension into one output: out = combiner(out,
/// value), started from the combiner's neutral element in every lane.
struct RowReduction {
  Operation *combiner;
  vector::CombiningKind kind;
  double neutral;
  /// The combiner's operand that is not the output's block argument.
  Value value;
  /// The scalar a `linalg.fill` (then erased) set the output to, or null: the
  /// output's current value.
  Value initial;
};

/// A row op: a generic on f32 buffers (bf16 ones indexed by all
/// loops too: a bf16 model's inputs and outputs), every loop parallel but
/// possibly the last, which may be a reduction; every operand either indexed
/// by all loops (identity map, unit-stride rows) or one value per row (the
/// leading loops; an input also by none: one value for all rows), or an
/// input read along the last loop only (isColumnMap, unit stride), outputs
/// by all loops unless the last loop reduces; a body
/// of elementwise arith/math ops on f32 (and i1) scalars.
struct RowOp {
  linalg::GenericOp op;
  /// One per output when the last loop is a reduction.
  SmallVector<RowReduction> reductions;

  unsigned loops() { return op.getNumLoops(); }
  /// An operand with one value per row (or for all rows): loaded once a
  /// row and broadcast, rather than read in vectors along the row.
  bool isRowOperand(OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return !map.isIdentity() && !isColumnMap(map);
  }
  bool isColumnOperand(OpOperand &operand) {
    return isColumnMap(op.getMatchingIndexingMap(&operand));
  }
  /// An operand indexed by all loops: it gives the row count and length.
  Value fullOperand() {
    for (OpOperand &operand : op->getOpOperands())
      if (op.getMatchingIndexingMap(&operand).isIdentity())
        return operand.get();
    return {};
  }
};

/// `op` as a row op, if it is one (with `bf16Vectors`, bf16 operands
/// indexed by all loops too).
std::optional<RowOp> matchRowOp(linalg::GenericOp op, bool bf16Vectors);

/// Ops a row loop may be moved past: they touch no memory the generics use
/// (values, views, allocations of fresh buffers).
bool canMovePast(Operation *op);

/// The fill that initializes `output` just before `op` (nothing in between
/// touches it): a `linalg.fill` of an f32, or its generalized form (a
/// linalg.generic yielding its one scalar input), or null.
Operation *findInitializingFill(Operation *op, Value output);

/// The scalar that fill `fill` (findInitializingFill's) writes.
Value filledValue(Operation *fill);

/// Each reduction of `rowOps` whose output a fill initializes just before
/// it (findInitializingFill), with that fill.
SmallVector<std::pair<RowReduction *, Operation *>>
initializingFills(MutableArrayRef<RowOp> rowOps);

/// Folds those fills: each reduction starts from its fill's value instead
/// (RowReduction::initial), and the fill, a loop of its own, is erased.
void foldInitializingFills(RewriterBase &rewriter,
                           MutableArrayRef<RowOp> rowOps);

/// Generics that run in one parallel loop over the rows of the first one.
/// A member has the group's rank (its rows are the group's: it shares a
/// buffer with an earlier member, in the same role), or one loop less and no
/// reduction (a `row-scalar` op on per-row values: the log of a row sum).
/// Every operand is read at its own row only, so running the members row by
/// row, in order, computes what running them one after another does, unless
/// two operands are different views of one buffer that a member writes.
struct RowGroup {
  unsigned rank;
  SmallVector<RowOp> members;

  bool isRowScalar(RowOp &member) { return member.loops() < rank; }
  /// Each operand of each member with whether it holds one value per row.
  SmallVector<std::pair<Value, bool>> operandRoles();
  /// Adds `candidate` if it can join (see above); returns whether it did.
  bool tryAdd(RowOp candidate);
  /// Whether a member writes a buffer that the group reaches through two
  /// different values (views), whose rows need not line up.
  bool viewsOfWrittenBuffer();
};

/// `rowOps` (in program order) grouped where consecutive ones (nothing
/// but movable ops between them: canMovePast, or `alsoMovable`) share
/// rows. Where a row op right after a group cannot join it (its rows need
/// not line up with the group's), `pass` remarks, unless empty: its loop
/// and the barrier after it are extra (a cell's tail in a time loop pays
/// them per step).
SmallVector<RowGroup>
formRowGroups(ArrayRef<RowOp> rowOps, StringRef pass,
              function_ref<bool(Operation *)> alsoMovable = nullptr);

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_ROWOPS_H
