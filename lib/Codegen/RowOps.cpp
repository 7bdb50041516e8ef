//===- RowOps.cpp - row ops and the groups that share their rows ---------===//
//
// Matching row ops and grouping them (RowOps.h); the targets' emitters are
// lib/Codegen/CPU/RowOps.cpp and lib/Codegen/GPU/RowGroups.cpp.
//
//===----------------------------------------------------------------------===//

#include "RowOps.h"
#include "BufferViews.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;
using namespace mlir::recur;
using utils::IteratorType;

bool mlir::recur::isElementwiseF32Body(Block &body, bool withIndices,
                                       bool bf16Conversions) {
  auto allowed = [&](Type type) {
    return type.isF32() || type.isInteger(1) ||
           (withIndices && (type.isInteger(64) || type.isIndex()));
  };
  for (Operation &nested : body.without_terminator()) {
    if (withIndices && isa<linalg::IndexOp>(nested))
      continue;
    // A bf16 model's conversions at its interface (f32 <-> bf16).
    if (bf16Conversions && isa<arith::ExtFOp, arith::TruncFOp>(nested) &&
        llvm::all_of(llvm::concat<Type>(nested.getOperandTypes(),
                                        nested.getResultTypes()),
                     [](Type type) { return type.isF32() || type.isBF16(); }))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(nested.getDialect()) ||
        nested.getNumRegions() != 0)
      return false;
    if (isa<arith::ConstantOp>(nested))
      continue;
    if (!nested.hasTrait<OpTrait::Elementwise>())
      return false;
    if (!llvm::all_of(llvm::concat<Type>(nested.getOperandTypes(),
                                         nested.getResultTypes()),
                      allowed))
      return false;
  }
  return true;
}

/// (d0, ..., d{n-1}) -> (d0, ..., d{n-2}): one value per row; for n = 1,
/// (d0) -> (), the one row's value.
bool mlir::recur::isRowMap(AffineMap map) {
  unsigned dims = map.getNumDims();
  if (dims == 0 || map.getNumSymbols() != 0)
    return false;
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < dims; ++dim)
    leading.push_back(getAffineDimExpr(dim, map.getContext()));
  return map == AffineMap::get(dims, 0, leading, map.getContext());
}

bool mlir::recur::isColumnMap(AffineMap map) {
  unsigned dims = map.getNumDims();
  if (dims < 2 || map.getNumSymbols() != 0 || map.isIdentity() ||
      map.getNumResults() == 0 || !map.isProjectedPermutation() ||
      map.getDimPosition(map.getNumResults() - 1) != dims - 1)
    return false;
  for (unsigned result = 1; result < map.getNumResults(); ++result)
    if (map.getDimPosition(result - 1) >= map.getDimPosition(result))
      return false;
  return true;
}

namespace {

std::optional<std::pair<vector::CombiningKind, double>>
combiningKind(Operation *op) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  using vector::CombiningKind;
  if (isa<arith::AddFOp>(op))
    return std::make_pair(CombiningKind::ADD, 0.0);
  if (isa<arith::MulFOp>(op))
    return std::make_pair(CombiningKind::MUL, 1.0);
  if (isa<arith::MaximumFOp>(op))
    return std::make_pair(CombiningKind::MAXIMUMF, -infinity);
  if (isa<arith::MinimumFOp>(op))
    return std::make_pair(CombiningKind::MINIMUMF, infinity);
  if (isa<arith::MaxNumFOp>(op))
    return std::make_pair(CombiningKind::MAXNUMF, -infinity);
  if (isa<arith::MinNumFOp>(op))
    return std::make_pair(CombiningKind::MINNUMF, infinity);
  return std::nullopt;
}

} // namespace

std::optional<RowOp> mlir::recur::matchRowOp(linalg::GenericOp op,
                                             bool bf16Vectors) {
  unsigned loops = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || loops == 0)
    return std::nullopt;
  SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
  bool reduces = iterators.back() == IteratorType::reduction;
  if (llvm::any_of(ArrayRef(iterators).drop_back(), [](IteratorType iterator) {
        return iterator != IteratorType::parallel;
      }))
    return std::nullopt;
  // (linalg's verifier has checked that the static sizes agree.)
  bool hasFullOperand = false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool full = map.isIdentity();
    // An input read at no index is one value for every row (a scale).
    bool scalar = op.isDpsInput(&operand) && map.getNumResults() == 0;
    // An input read along the row only is one vector for every row.
    bool column = op.isDpsInput(&operand) && isColumnMap(map);
    if (!full && !scalar && !column && !isRowMap(map))
      return std::nullopt;
    // A reduction writes one value per row, an elementwise op every element.
    if (op.isDpsInit(&operand) && full == reduces)
      return std::nullopt;
    // Per-row inputs may also be integers (a row's target class).
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    bool rowInteger = !full && !column && op.isDpsInput(&operand) && type &&
                      type.getElementType().isInteger(64);
    bool fullBf16 =
        full && type && type.getElementType().isBF16() && bf16Vectors;
    if (!type || (!type.getElementType().isF32() && !rowInteger && !fullBf16) ||
        ((full || column) && !type.isLastDimUnitStride()))
      return std::nullopt;
    hasFullOperand |= full;
  }
  // The rows and their length come from an operand indexed by all loops.
  if (!hasFullOperand)
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (!isElementwiseF32Body(body, /*withIndices=*/true, bf16Vectors))
    return std::nullopt;
  RowOp rowOp{op, {}};
  if (!reduces)
    return rowOp;
  // Each output is yielded as combiner(its block argument, value), and the
  // block argument is read nowhere else.
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument argument = op.getMatchingBlockArgument(&init);
    Value yielded =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    Operation *combiner = yielded.getDefiningOp();
    if (!combiner || combiner->getBlock() != &body || !argument.hasOneUse() ||
        !yielded.hasOneUse() ||
        argument.getUses().begin()->getOwner() != combiner)
      return std::nullopt;
    auto kind = combiningKind(combiner);
    Value value = combiner->getOperand(0) == argument ? combiner->getOperand(1)
                                                      : combiner->getOperand(0);
    if (!kind || value == argument)
      return std::nullopt;
    rowOp.reductions.push_back(
        {combiner, kind->first, kind->second, value, {}});
  }
  return rowOp;
}

/// Ops a row loop may be moved past: they touch no memory the generics use
/// (values, views, allocations of fresh buffers).
bool mlir::recur::canMovePast(Operation *op) {
  return (isMemoryEffectFree(op) && op->getNumRegions() == 0) ||
         isa<memref::AllocOp>(op);
}

/// A linalg.generic on buffers that yields its one input, an f32 scalar,
/// at every element of its one output: a linalg.fill, generalized.
static bool isFillGeneric(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getDpsInputOperand(0)->get().getType().isF32() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return false;
  Block &body = *generic.getBody();
  return body.getOperations().size() == 1 &&
         body.getTerminator()->getOperand(0) == body.getArgument(0);
}

Value mlir::recur::filledValue(Operation *fill) {
  if (auto named = dyn_cast<linalg::FillOp>(fill))
    return named.getInputs()[0];
  return cast<linalg::GenericOp>(fill).getDpsInputOperand(0)->get();
}

Operation *mlir::recur::findInitializingFill(Operation *op, Value output) {
  Value root = rootBuffer(output);
  for (Operation *previous = op->getPrevNode(); previous;
       previous = previous->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(previous);
        fill && fill.hasPureBufferSemantics() &&
        fill.getOutputs()[0] == output && fill.getInputs()[0].getType().isF32())
      return fill;
    if (auto generic = dyn_cast<linalg::GenericOp>(previous);
        generic && isFillGeneric(generic) &&
        generic.getDpsInitOperand(0)->get() == output)
      return generic;
    if (canMovePast(previous))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(previous);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
        llvm::any_of(previous->getOperands(), [&](Value operand) {
          return rootBuffer(operand) == root;
        }))
      return nullptr;
  }
  return nullptr;
}

SmallVector<std::pair<RowReduction *, Operation *>>
mlir::recur::initializingFills(MutableArrayRef<RowOp> rowOps) {
  SmallVector<std::pair<RowReduction *, Operation *>> fills;
  for (RowOp &rowOp : rowOps)
    for (auto [reduction, output] :
         llvm::zip(rowOp.reductions, rowOp.op.getDpsInits()))
      if (Operation *fill = findInitializingFill(rowOp.op, output))
        fills.push_back({&reduction, fill});
  return fills;
}

void mlir::recur::foldInitializingFills(RewriterBase &rewriter,
                                        MutableArrayRef<RowOp> rowOps) {
  for (auto [reduction, fill] : initializingFills(rowOps)) {
    reduction->initial = filledValue(fill);
    rewriter.eraseOp(fill);
  }
}

SmallVector<std::pair<Value, bool>> RowGroup::operandRoles() {
  SmallVector<std::pair<Value, bool>> roles;
  for (RowOp &member : members)
    for (OpOperand &operand : member.op->getOpOperands())
      roles.push_back(
          {operand.get(), isRowScalar(member) || member.isRowOperand(operand)});
  return roles;
}

bool RowGroup::tryAdd(RowOp candidate) {
  bool rowScalar =
      candidate.loops() + 1 == rank && candidate.reductions.empty() &&
      llvm::all_of(candidate.op.getIndexingMapsArray(),
                   [](AffineMap map) { return map.isIdentity(); }) &&
      candidate.op.getBody()->getOps<linalg::IndexOp>().empty();
  if (candidate.loops() != rank && !rowScalar)
    return false;
  SmallVector<std::pair<Value, bool>> roles = operandRoles();
  // One value for all rows says nothing about the rows lining up.
  bool shares =
      llvm::any_of(candidate.op->getOpOperands(), [&](OpOperand &operand) {
        // Nor does one vector for all rows.
        if ((rank > 1 &&
             candidate.op.getMatchingIndexingMap(&operand).getNumResults() ==
                 0) ||
            candidate.isColumnOperand(operand))
          return false;
        bool isRow = rowScalar || candidate.isRowOperand(operand);
        return llvm::is_contained(roles, std::make_pair(operand.get(), isRow));
      });
  if (!shares)
    return false;
  members.push_back(candidate);
  if (viewsOfWrittenBuffer()) {
    members.pop_back();
    return false;
  }
  return true;
}

bool RowGroup::viewsOfWrittenBuffer() {
  DenseMap<Value, SmallVector<Value>> viewsOf;
  for (auto [value, isRow] : operandRoles()) {
    SmallVector<Value> &views = viewsOf[rootBuffer(value)];
    if (!llvm::is_contained(views, value))
      views.push_back(value);
  }
  for (RowOp &member : members)
    for (Value output : member.op.getDpsInits())
      if (viewsOf[rootBuffer(output)].size() > 1)
        return true;
  return false;
}

SmallVector<RowGroup>
mlir::recur::formRowGroups(ArrayRef<RowOp> rowOps, StringRef pass,
                           function_ref<bool(Operation *)> alsoMovable) {
  SmallVector<RowGroup> groups;
  Operation *previous = nullptr;
  for (RowOp rowOp : rowOps) {
    bool adjacent = previous && previous->getBlock() == rowOp.op->getBlock();
    for (Operation *between = previous ? previous->getNextNode() : nullptr;
         adjacent && between != rowOp.op.getOperation();
         between = between->getNextNode())
      adjacent = between && (canMovePast(between) ||
                             (alsoMovable && alsoMovable(between)));
    if (!adjacent || !groups.back().tryAdd(rowOp)) {
      if (adjacent && !pass.empty())
        remarkMissed(rowOp.op, pass,
                     "this row op runs as a parallel loop of its own, not "
                     "in the one of the row ops right before it",
                     "it shares no rows with them that provably line up");
      groups.push_back({rowOp.op.getNumLoops(), {rowOp}});
    }
    previous = rowOp.op;
  }
  return groups;
}
