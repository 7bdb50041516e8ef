//===- RowwiseOps.h - tensor ops that compute each row from its own row -*-===//
//
// An op on [rows, ...] tensors that computes each row of its results from
// the same row of its row operands, and from values the same for every row
// (weights, constants, the row count), runs unchanged on any number of
// rows: on a cell's B rows or on all T·B rows of a sequence. So what a cell
// computes from x_t alone can run once over the whole sequence before the
// loop (recur-hoist-input-projection), and back inside a cell where a
// wavefront needs it per step (recur-wavefront).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TRANSFORMS_ROWWISEOPS_H
#define RECUR_TRANSFORMS_ROWWISEOPS_H

#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::recur {

/// What an op's operands are to isRowwise.
struct RowRoles {
  /// A tensor whose dimension 0 is the rows.
  function_ref<bool(Value)> isRow;
  /// A value the same for every row: a weight, a constant, the row count.
  function_ref<bool(Value)> isInvariant;
  /// An index that is the number of rows.
  function_ref<bool(Value)> isRowCount;
};

/// Whether `op` computes each row of its results (rows, dimension 0
/// dynamic) from the same row of its row operands and from invariant
/// values only: a linalg.generic parallel along d0 that reads every row
/// operand at d0 (and nothing else at d0), linalg.fill, elementwise arith
/// and math on tensors, recur.linear with an invariant weight, and slices,
/// reshapes, casts and concatenations that keep dimension 0 as it is (a
/// tensor.empty whose dimension 0 is the row count is rowwise too).
bool isRowwise(Operation *op, const RowRoles &roles);

/// Whether `op` is a view, a reshape or a copy (no arithmetic of its own:
/// a linalg.generic that yields its inputs' elements, such as the add of a
/// bias that recur-hoist-input-projection folded into the product).
bool isRowView(Operation *op);

/// Whether `value` reads the row count of a value in `rows`: a
/// `tensor.dim %v, 0`, or T·B of the [T, B, N] tensor that `v` collapses as
/// canonicalization folds the collapse's size (an affine.apply).
bool readsRowCount(Value value, const DenseSet<Value> &rows);

/// Whether `value` is a tensor.empty of dynamic rows, or a fill of one,
/// whose row count `isRowCount` accepts: a new tensor of the rows (a
/// reduction's output) rather than one computed from them.
bool isFreshRows(Value value, function_ref<bool(Value)> isRowCount);

/// Clones `ops` (rowwise, in order) at `builder`'s point with `mapping`,
/// first cloning what they read that the mapping lacks and `isLeaf`
/// accepts (constants, tensor.empty, fills of them, size reads: defined
/// before them, computed from nothing `ops` compute); returns false, having
/// cloned nothing, if an operand is neither mapped nor a leaf.
bool cloneRowwise(OpBuilder &builder, ArrayRef<Operation *> ops,
                  IRMapping &mapping, function_ref<bool(Operation *)> isLeaf);

/// What a recurrence computes before its loop from the rows of its input
/// (recur-hoist-input-projection's: a layer norm of its input product):
/// its input = expand(ops(collapse(sequence))), rowwise on the sequence's
/// T·B rows.
struct RowChain {
  /// The sequence's T·B rows.
  tensor::CollapseShapeOp rows;
  /// Rowwise, in order; what they read besides: constants, the row count,
  /// tensor.empty and fills of it (isRowChainLeaf), and `invariants`.
  SmallVector<Operation *> ops;
  /// The tensors they read from before the chain.
  SmallVector<Value> invariants;
  /// The row counts they read that are not a tensor.dim of the rows (T·B
  /// of the sequence, readsRowCount): a copy of the chain takes its rows'.
  SmallVector<Value> rowCounts;
  /// Their result's rows as [T, B, n]: the recurrence's input.
  tensor::ExpandShapeOp steps;
};

/// What a row chain reads besides its rows and invariants, cloned with it.
bool isRowChainLeaf(Operation *op);

/// The row chain whose result is `recurrence`'s input, if its input is one
/// (and nothing else reads what the chain computes).
std::optional<RowChain> rowChainInto(RNNOp recurrence);

} // namespace mlir::recur

#endif // RECUR_TRANSFORMS_ROWWISEOPS_H
