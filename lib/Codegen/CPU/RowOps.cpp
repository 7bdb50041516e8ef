//===- RowOps.cpp - row ops and their groups on vectors -------------------===//
//
// Elementwise generics and reductions along the last dimension, on buffers:
//   scf.parallel (rows) { scf.for j step W { body on vector<W> } ; masked tail
//   }
// with a vector accumulator per reduction, reduced across lanes once per row.
// Consecutive such generics over the same rows (max, sum of exp and the
// normalization of a log-softmax) share one parallel loop, so a row is
// still in cache when the next one reads it.
//
//===----------------------------------------------------------------------===//

#include "../BufferViews.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "RowKernels.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

/// (d0, ..., d{n-1}) -> (d0, ..., d{n-2}): one value per row; for n = 1,
/// (d0) -> (), the one row's value.
bool mlir::recur::cpu::isRowMap(AffineMap map) {
  unsigned dims = map.getNumDims();
  if (dims == 0 || map.getNumSymbols() != 0)
    return false;
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < dims; ++dim)
    leading.push_back(getAffineDimExpr(dim, map.getContext()));
  return map == AffineMap::get(dims, 0, leading, map.getContext());
}

bool mlir::recur::cpu::isColumnMap(AffineMap map) {
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

std::optional<RowOp> mlir::recur::cpu::matchRowOp(linalg::GenericOp op,
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
bool mlir::recur::cpu::canMovePast(Operation *op) {
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

Value mlir::recur::cpu::filledValue(Operation *fill) {
  if (auto named = dyn_cast<linalg::FillOp>(fill))
    return named.getInputs()[0];
  return cast<linalg::GenericOp>(fill).getDpsInputOperand(0)->get();
}

Operation *mlir::recur::cpu::findInitializingFill(Operation *op,
                                                  Value output) {
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
        if ((rank > 1 && candidate.op.getMatchingIndexingMap(&operand)
                                 .getNumResults() == 0) ||
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
mlir::recur::cpu::formRowGroups(ArrayRef<RowOp> rowOps, StringRef pass,
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

/// `size` elements in vectors of `width` lanes: `body(j, inBounds)` in a loop
/// over the whole vectors, then in one over the partial last one.
void mlir::recur::cpu::buildVectorLoops(OpBuilder &b, Location loc, Value size,
                                        int64_t width,
                                        function_ref<void(Value, bool)> body) {
  Value whole = roundDown(b, loc, size, width);
  Value step = arith::ConstantIndexOp::create(b, loc, width);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  buildFor(b, loc, zero, whole, step, [&](Value j) { body(j, true); });
  buildFor(b, loc, whole, size, step, [&](Value j) { body(j, false); });
}

/// `eachRow(leading)` in a parallel loop over the rows of `buffer` (the
/// indices of its leading `rank - 1` dimensions), or once when it has none.
void mlir::recur::cpu::buildRowLoop(OpBuilder &b, Location loc, Value buffer,
                                    unsigned rank,
                                    function_ref<void(ValueRange)> eachRow) {
  if (rank <= 1) {
    eachRow({});
    return;
  }
  SmallVector<Value> lower, upper, steps;
  for (unsigned dim = 0; dim + 1 < rank; ++dim) {
    lower.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    upper.push_back(memref::DimOp::create(b, loc, buffer, dim));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  buildParallel(b, loc, lower, upper, steps, eachRow);
}

namespace {

class RowGroupEmitter {
public:
  RowGroupEmitter(RewriterBase &rewriter, RowGroup &group, int64_t vectorWidth,
                  ArrayRef<CopiedOutput> copies)
      : b(rewriter), loc(group.members.back().op->getLoc()), group(group),
        vectorWidth(vectorWidth), vectors(rewriter, loc, vectorWidth),
        copies(copies) {}

  void emit() {
    buildRowLoop(b, loc, group.members.front().fullOperand(), group.rank,
                 [&](ValueRange leading) {
                   for (RowOp &member : group.members) {
                     if (group.isRowScalar(member))
                       emitRowScalar(member, leading);
                     else
                       emitRow(member, leading);
                   }
                 });
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  VectorType vectorOf(Type element) { return vectors.vectorOf(element); }

  Value splat(Type element, double value) {
    auto type = vectorOf(element);
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
  }

  /// The row's value of a per-row operand at `leading` (a rank-0 buffer's
  /// one value).
  Value loadRowValue(Value buffer, ValueRange leading) {
    return memref::LoadOp::create(
        b, loc, buffer,
        leading.take_front(cast<MemRefType>(buffer.getType()).getRank()));
  }

  /// One row of an elementwise op or a reduction: vectors along the last
  /// dimension, the partial last one masked.
  void emitRow(RowOp &member, ValueRange leading) {
    linalg::GenericOp op = member.op;
    Value full = member.fullOperand();
    Value size = memref::DimOp::create(b, loc, full, group.rank - 1);
    // Per-row inputs are loaded once and broadcast.
    IRMapping rowValues;
    for (OpOperand *input : op.getDpsInputOperands())
      if (member.isRowOperand(*input)) {
        Value value = loadRowValue(input->get(), leading);
        rowValues.map(op.getMatchingBlockArgument(input),
                      vector::BroadcastOp::create(
                          b, loc, vectorOf(value.getType()), value));
      }
    // The column indices of a vector: its first column plus 0, 1, ...
    Value lanes;
    if (!op.getBody()->getOps<linalg::IndexOp>().empty()) {
      auto laneType = vectorOf(b.getIndexType());
      lanes = arith::ConstantOp::create(
          b, loc, laneType,
          DenseElementsAttr::get(
              laneType, llvm::to_vector(
                            llvm::map_range(llvm::seq<int64_t>(0, vectorWidth),
                                            [&](int64_t lane) -> Attribute {
                                              return b.getIndexAttr(lane);
                                            }))));
    }
    auto mapIndices = [&](IRMapping &mapping, Value j) {
      for (linalg::IndexOp index : op.getBody()->getOps<linalg::IndexOp>()) {
        Value vector =
            index.getDim() + 1 == group.rank
                ? arith::AddIOp::create(
                      b, loc,
                      vector::BroadcastOp::create(b, loc, lanes.getType(), j),
                      lanes)
                      .getResult()
                : vector::BroadcastOp::create(b, loc, lanes.getType(),
                                              leading[index.getDim()])
                      .getResult();
        mapping.map(index.getResult(), vector);
      }
    };

    if (member.reductions.empty()) {
      buildVectorLoops(b, loc, size, vectorWidth, [&](Value j, bool inBounds) {
        IRMapping mapping = rowValues;
        SmallVector<Value> indices(leading);
        indices.push_back(j);
        readFull(member, indices, inBounds, mapping);
        mapIndices(mapping, j);
        vectors.cloneBody(op, mapping);
        writeOutputs(op, mapping, indices, inBounds);
      });
      return;
    }

    SmallVector<Value> accumulators;
    for (RowReduction &reduction : member.reductions)
      accumulators.push_back(splat(b.getF32Type(), reduction.neutral));
    auto reductionLoop = [&](Value begin, Value end, bool inBounds,
                             ValueRange initial) {
      return buildForWithValues(
          b, loc, begin, end, index(vectorWidth), initial,
          [&](Value j, ValueRange carried) {
            IRMapping mapping = rowValues;
            SmallVector<Value> indices(leading);
            indices.push_back(j);
            readFull(member, indices, inBounds, mapping);
            mapIndices(mapping, j);
            SmallVector<Operation *> combiners;
            for (RowReduction &reduction : member.reductions)
              combiners.push_back(reduction.combiner);
            vectors.cloneBody(op, mapping, combiners);
            // Lanes past the end keep their accumulator.
            Value mask;
            if (!inBounds)
              mask = vector::CreateMaskOp::create(
                  b, loc, VectorType::get({vectorWidth}, b.getI1Type()),
                  ArrayRef<OpFoldResult>{
                      arith::SubIOp::create(b, loc, end, j).getResult()});
            SmallVector<Value> next;
            for (auto [reduction, accumulator] :
                 llvm::zip(member.reductions, carried)) {
              IRMapping combine;
              combine.map(reduction.value,
                          vectors.vectorValue(mapping, reduction.value));
              for (Value operand : reduction.combiner->getOperands())
                if (operand != reduction.value)
                  combine.map(operand, accumulator);
              Value combined =
                  vectors.vectorize(reduction.combiner, combine)->getResult(0);
              if (mask)
                combined = arith::SelectOp::create(b, loc, mask, combined,
                                                   accumulator);
              next.push_back(combined);
            }
            return next;
          });
    };
    Value whole = roundDown(b, loc, size, vectorWidth);
    accumulators = reductionLoop(index(0), whole, true, accumulators);
    accumulators = reductionLoop(whole, size, false, accumulators);
    for (auto [reduction, accumulator, output] :
         llvm::zip(member.reductions, accumulators, op.getDpsInits())) {
      Value initial =
          reduction.initial ? reduction.initial : loadRowValue(output, leading);
      Value result = vector::ReductionOp::create(b, loc, reduction.kind,
                                                 accumulator, initial);
      memref::StoreOp::create(b, loc, result, output, leading);
    }
  }

  /// An elementwise op on per-row values, one scalar per row.
  void emitRowScalar(RowOp &member, ValueRange leading) {
    linalg::GenericOp op = member.op;
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument argument = op.getMatchingBlockArgument(&operand);
      if (!argument.use_empty())
        mapping.map(argument, loadRowValue(operand.get(), leading));
    }
    Block &body = op.getRegion().front();
    for (Operation &nested : body.without_terminator())
      b.clone(nested, mapping);
    for (auto [value, output] :
         llvm::zip(body.getTerminator()->getOperands(), op.getDpsInits()))
      memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value), output,
                              leading);
  }

  /// Maps the block arguments of `member`'s operands read along the row
  /// to vectors read at `indices` (the loops' indices; an operand indexed by
  /// some of them, a column vector, at those; an output only when the body
  /// reads it: c of the cell).
  void readFull(RowOp &member, ArrayRef<Value> indices, bool inBounds,
                IRMapping &mapping) {
    for (OpOperand &operand : member.op->getOpOperands()) {
      BlockArgument argument = member.op.getMatchingBlockArgument(&operand);
      if (member.isRowOperand(operand) || argument.use_empty())
        continue;
      AffineMap map = member.op.getMatchingIndexingMap(&operand);
      SmallVector<Value> at;
      for (unsigned result = 0; result < map.getNumResults(); ++result)
        at.push_back(indices[map.getDimPosition(result)]);
      Type element = argument.getType();
      Value zero = arith::ConstantOp::create(b, loc, element,
                                             b.getFloatAttr(element, 0.0));
      mapping.map(argument, vector::TransferReadOp::create(
                                b, loc, vectorOf(element), operand.get(), at,
                                zero, ArrayRef<bool>{inBounds}));
    }
  }

  void writeOutputs(linalg::GenericOp op, IRMapping &mapping,
                    ArrayRef<Value> indices, bool inBounds) {
    auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
    for (auto [value, init] :
         llvm::zip(yield.getOperands(), op.getDpsInits())) {
      Value mapped = vectors.vectorValue(mapping, value);
      vector::TransferWriteOp::create(b, loc, mapped, init, indices,
                                      ArrayRef<bool>{inBounds});
      for (const CopiedOutput &copy : copies)
        if (init == copy.source && op == copy.writer)
          vector::TransferWriteOp::create(b, loc, mapped, copy.target, indices,
                                          ArrayRef<bool>{inBounds});
    }
  }

  RewriterBase &b;
  Location loc;
  RowGroup &group;
  int64_t vectorWidth;
  BodyVectorizer vectors;
  /// Outputs that following copies (then erased) also write elsewhere.
  ArrayRef<CopiedOutput> copies;
};

} // namespace

void mlir::recur::cpu::emitRowGroup(RewriterBase &rewriter, RowGroup &group,
                                    int64_t vectorWidth,
                                    ArrayRef<CopiedOutput> copies) {
  RowGroupEmitter(rewriter, group, vectorWidth, copies).emit();
}
