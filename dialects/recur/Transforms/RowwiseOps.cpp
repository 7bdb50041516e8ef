//===- RowwiseOps.cpp - tensor ops that compute each row from its own row -===//

#include "RowwiseOps.h"
#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "recur/Utils/SizeReads.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

bool hasDynamicRows(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 && tensor.isDynamicDim(0);
}

/// Dimension 0 of a slice or a reshape's result: `size` rows of its row
/// source, at offset `offset`, as its first dimension.
bool keepsRows(OpFoldResult offset, OpFoldResult size, OpFoldResult stride,
               const RowRoles &roles) {
  auto sizeValue = dyn_cast<Value>(size);
  return isZeroInteger(offset) && isOneInteger(stride) && sizeValue &&
         roles.isRowCount(sizeValue);
}

bool allInvariant(ValueRange values, const RowRoles &roles) {
  return llvm::all_of(values,
                      [&](Value value) { return roles.isInvariant(value); });
}

bool isRowwiseGeneric(linalg::GenericOp generic, const RowRoles &roles) {
  if (!generic.hasPureTensorSemantics() || generic.getNumLoops() == 0 ||
      generic.getIteratorTypesArray().front() != utils::IteratorType::parallel)
    return false;
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (roles.isRow(operand.get())) {
      if (map.getNumResults() == 0 ||
          map.getResult(0) != getAffineDimExpr(0, generic.getContext()))
        return false;
      for (AffineExpr result : map.getResults().drop_front())
        if (result.isFunctionOfDim(0))
          return false;
    } else if (generic.isDpsInit(&operand) ||
               !roles.isInvariant(operand.get()) || map.isFunctionOfDim(0)) {
      return false;
    }
  }
  // The body sees the row's index only where it is the same in either form.
  for (linalg::IndexOp index : generic.getBody()->getOps<linalg::IndexOp>())
    if (index.getDim() == 0)
      return false;
  return true;
}

} // namespace

bool mlir::recur::isRowView(Operation *op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return llvm::all_of(
        generic.getBody()->getTerminator()->getOperands(), [&](Value value) {
          auto argument = dyn_cast<BlockArgument>(value);
          return argument && argument.getOwner() == generic.getBody() &&
                 argument.getArgNumber() < generic.getNumDpsInputs();
        });
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp>(op);
}

/// Whether `value` is T·B of the [T, B, N] tensor that `rows` collapses
/// ([[0, 1], [2]]), as canonicalization folds the collapse's size: an
/// affine.apply of T and B's product.
static bool isCollapsedRowCount(Value value, Value rows) {
  auto collapse = rows.getDefiningOp<tensor::CollapseShapeOp>();
  auto apply = value.getDefiningOp<affine::AffineApplyOp>();
  if (!collapse || !apply || collapse.getSrcType().getRank() != 3 ||
      collapse.getReassociationIndices() !=
          SmallVector<ReassociationIndices>{{0, 1}, {2}} ||
      apply.getMapOperands().size() != 2)
    return false;
  AffineMap map = apply.getAffineMap();
  MLIRContext *context = map.getContext();
  AffineExpr product = map.getNumDims() == 2
                           ? getAffineDimExpr(0, context) *
                                 getAffineDimExpr(1, context)
                           : getAffineSymbolExpr(0, context) *
                                 getAffineSymbolExpr(1, context);
  if (map.getNumResults() != 1 || map.getResult(0) != product)
    return false;
  for (auto [index, operand] : llvm::enumerate(apply.getMapOperands())) {
    Operation *size = operand.getDefiningOp();
    tensor::DimOp dim = size ? leadingSizeRead(size, 2) : tensor::DimOp();
    if (!dim || dim.getSource() != collapse.getSrc() ||
        *dim.getConstantIndex() != int64_t(index))
      return false;
  }
  return true;
}

bool mlir::recur::readsRowCount(Value value, const DenseSet<Value> &rows) {
  if (auto dim = value.getDefiningOp<tensor::DimOp>())
    return leadingSizeRead(dim, 1) && rows.contains(dim.getSource());
  return value.getDefiningOp<affine::AffineApplyOp>() &&
         llvm::any_of(rows, [&](Value row) {
           return isCollapsedRowCount(value, row);
         });
}

bool mlir::recur::isFreshRows(Value value,
                              function_ref<bool(Value)> isRowCount) {
  Operation *producer = value.getDefiningOp();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(producer))
    producer = fill.getOutputs()[0].getDefiningOp();
  auto empty = dyn_cast_or_null<tensor::EmptyOp>(producer);
  return empty && empty.getType().isDynamicDim(0) &&
         isRowCount(empty.getDynamicSize(0));
}

bool mlir::recur::isRowwise(Operation *op, const RowRoles &roles) {
  if (!llvm::all_of(op->getResultTypes(), hasDynamicRows))
    return false;
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return isRowwiseGeneric(generic, roles);
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() && roles.isRow(fill.getOutputs()[0]) &&
           allInvariant(fill.getInputs(), roles);
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return roles.isRowCount(empty.getDynamicSize(0)) &&
           allInvariant(empty.getDynamicSizes(), roles);
  if (auto product = dyn_cast<LinearOp>(op))
    return cast<RankedTensorType>(product.getInput().getType()).getRank() == 2 &&
           roles.isRow(product.getInput()) &&
           roles.isInvariant(product.getWeight()) &&
           (!product.getBias() || roles.isInvariant(product.getBias()));
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return roles.isRow(slice.getSource()) &&
           !slice.getDroppedDims().test(0) &&
           keepsRows(slice.getMixedOffsets()[0], slice.getMixedSizes()[0],
                     slice.getMixedStrides()[0], roles) &&
           allInvariant(slice.getOffsets(), roles) &&
           allInvariant(slice.getSizes(), roles);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    // Dimension 0 stays the rows: its group adds only unit dimensions.
    ReassociationIndices first = expand.getReassociationIndices().front();
    auto type = expand.getResultType();
    return roles.isRow(expand.getSrc()) &&
           llvm::all_of(ArrayRef(first).drop_front(),
                        [&](int64_t dim) { return type.getDimSize(dim) == 1; }) &&
           roles.isRowCount(expand.getOutputShape().front()) &&
           allInvariant(expand.getOutputShape(), roles);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    ReassociationIndices first = collapse.getReassociationIndices().front();
    auto type = collapse.getSrcType();
    return roles.isRow(collapse.getSrc()) &&
           llvm::all_of(ArrayRef(first).drop_front(),
                        [&](int64_t dim) { return type.getDimSize(dim) == 1; });
  }
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return roles.isRow(cast.getSource());
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return concat.getDim() != 0 &&
           llvm::all_of(concat.getInputs(),
                        [&](Value input) { return roles.isRow(input); });
  // Elementwise arith and math on tensors of the same shape.
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0 &&
      op->getNumResults() == 1 && isPure(op))
    return llvm::all_of(op->getOperands(),
                        [&](Value operand) { return roles.isRow(operand); });
  return false;
}

bool mlir::recur::cloneRowwise(OpBuilder &builder, ArrayRef<Operation *> ops,
                               IRMapping &mapping,
                               function_ref<bool(Operation *)> isLeaf) {
  DenseSet<Operation *> cloned(ops.begin(), ops.end());
  // The leaves the ops read, each after the leaves it reads.
  SetVector<Operation *> leaves;
  std::function<bool(Value)> reachable = [&](Value value) {
    if (mapping.contains(value))
      return true;
    Operation *producer = value.getDefiningOp();
    if (!producer)
      return false;
    if (cloned.contains(producer) || leaves.contains(producer))
      return true;
    if (!isLeaf(producer) ||
        !llvm::all_of(producer->getOperands(), reachable))
      return false;
    leaves.insert(producer);
    return true;
  };
  for (Operation *op : ops) {
    if (!llvm::all_of(op->getOperands(), reachable))
      return false;
    // What a body reads from around it must reach the clone too.
    bool bodyReadsReachable = true;
    op->walk([&](Operation *nested) {
      if (nested == op)
        return;
      for (Value operand : nested->getOperands())
        if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
          bodyReadsReachable &= reachable(operand);
    });
    if (!bodyReadsReachable)
      return false;
  }
  for (Operation *leaf : leaves)
    builder.clone(*leaf, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  return true;
}

bool mlir::recur::isRowChainLeaf(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp,
             linalg::FillOp>(op);
}

/// The row chain whose result is `layer`'s input, if its input is one.
std::optional<RowChain> mlir::recur::rowChainInto(RNNOp layer) {
  auto steps = layer.getInput().getDefiningOp<tensor::ExpandShapeOp>();
  if (!steps || !steps->hasOneUse() || steps.getSrcType().getRank() != 2 ||
      steps.getReassociationIndices() !=
          SmallVector<ReassociationIndices>{{0, 1}, {2}})
    return std::nullopt;
  RowChain chain;
  chain.steps = steps;
  Block *block = layer->getBlock();
  // Back from the result to the collapse of a sequence, through the ops
  // that compute from it.
  SetVector<Operation *> ops;
  SmallVector<Value> worklist = {steps.getSrc()};
  while (!worklist.empty()) {
    Operation *producer = worklist.pop_back_val().getDefiningOp();
    if (!producer || producer->getBlock() != block || ops.contains(producer) ||
        isRowChainLeaf(producer))
      continue;
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(producer);
        collapse && collapse.getSrcType().getRank() == 3 &&
        collapse.getReassociationIndices() ==
            SmallVector<ReassociationIndices>{{0, 1}, {2}}) {
      if (chain.rows && chain.rows != collapse)
        return std::nullopt;
      chain.rows = collapse;
      continue;
    }
    ops.insert(producer);
    llvm::append_range(worklist, producer->getOperands());
  }
  if (!chain.rows || ops.empty())
    return std::nullopt;
  chain.ops = llvm::to_vector(ops);
  llvm::sort(chain.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  // Rowwise on the rows, reading tensors from before the chain otherwise,
  // and read by nothing but the chain.
  DenseSet<Value> rows = {chain.rows.getResult()};
  for (Operation *op : chain.ops)
    rows.insert(op->result_begin(), op->result_end());
  SetVector<Value> rowCounts;
  auto isRowCount = [&](Value value) {
    if (!readsRowCount(value, rows))
      return false;
    if (!value.getDefiningOp<tensor::DimOp>())
      rowCounts.insert(value);
    return true;
  };
  auto isLeafRow = [&](Value value) { return isFreshRows(value, isRowCount); };
  SetVector<Value> invariants;
  auto isInvariant = [&](Value value) {
    if (matchPattern(value, m_Constant()) || isRowCount(value))
      return true;
    Operation *producer = value.getDefiningOp();
    if (!isa<RankedTensorType>(value.getType()) || rows.contains(value) ||
        (producer && producer->getBlock() == block &&
         !producer->isBeforeInBlock(chain.rows)))
      return false;
    invariants.insert(value);
    return true;
  };
  auto isRow = [&](Value value) {
    return rows.contains(value) || isLeafRow(value);
  };
  RowRoles roles{isRow, isInvariant, isRowCount};
  for (Operation *op : chain.ops) {
    if (!isRowwise(op, roles))
      return std::nullopt;
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (user != steps && !ops.contains(user) && !isRowChainLeaf(user))
          return std::nullopt;
  }
  for (Operation *user : chain.rows->getUsers())
    if (!ops.contains(user) && !isRowChainLeaf(user))
      return std::nullopt;
  chain.invariants = invariants.takeVector();
  chain.rowCounts = rowCounts.takeVector();
  return chain;
}

