//===- VectorizeElementwise.cpp - row-wise generics on vectors ------------===//
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
#include "recur/Codegen/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace mlir::recur {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

using utils::IteratorType;

/// (d0, ..., d{n-1}) -> (d0, ..., d{n-2}): one value per row; for n = 1,
/// (d0) -> (), the one row's value.
bool isRowMap(AffineMap map) {
  unsigned dims = map.getNumDims();
  if (dims == 0 || map.getNumSymbols() != 0)
    return false;
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < dims; ++dim)
    leading.push_back(getAffineDimExpr(dim, map.getContext()));
  return map == AffineMap::get(dims, 0, leading, map.getContext());
}

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

/// A generic this pass vectorizes: on f32 buffers (bf16 ones indexed by all
/// loops too: a bf16 model's inputs and outputs), every loop parallel but
/// possibly the last, which may be a reduction; every operand either indexed
/// by all loops (identity map, unit-stride rows) or one value per row (the
/// leading loops; an input also by none: one value for all rows), outputs by
/// all loops unless the last loop reduces; a body
/// of elementwise arith/math ops on f32 (and i1) scalars.
struct RowOp {
  linalg::GenericOp op;
  /// One per output when the last loop is a reduction.
  SmallVector<RowReduction> reductions;

  unsigned loops() { return op.getNumLoops(); }
  bool isRowOperand(OpOperand &operand) {
    return !op.getMatchingIndexingMap(&operand).isIdentity();
  }
  /// An operand indexed by all loops: it gives the row count and length.
  Value fullOperand() {
    for (OpOperand &operand : op->getOpOperands())
      if (!isRowOperand(operand))
        return operand.get();
    return {};
  }
};

std::optional<RowOp> matchRowOp(linalg::GenericOp op, bool bf16Vectors) {
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
    if (!full && !scalar && !isRowMap(map))
      return std::nullopt;
    // A reduction writes one value per row, an elementwise op every element.
    if (op.isDpsInit(&operand) && full == reduces)
      return std::nullopt;
    // Per-row inputs may also be integers (a row's target class).
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    bool rowInteger = !full && op.isDpsInput(&operand) && type &&
                      type.getElementType().isInteger(64);
    bool fullBf16 =
        full && type && type.getElementType().isBF16() && bf16Vectors;
    if (!type || (!type.getElementType().isF32() && !rowInteger && !fullBf16) ||
        (full && !type.isLastDimUnitStride()))
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
bool canMovePast(Operation *op) {
  return (isMemoryEffectFree(op) && op->getNumRegions() == 0) ||
         isa<memref::AllocOp>(op);
}

/// The `linalg.fill` that initializes `output` just before `op` (nothing in
/// between touches it), or null.
linalg::FillOp findInitializingFill(Operation *op, Value output) {
  Value root = rootBuffer(output);
  for (Operation *previous = op->getPrevNode(); previous;
       previous = previous->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(previous);
        fill && fill.hasPureBufferSemantics() &&
        fill.getOutputs()[0] == output && fill.getInputs()[0].getType().isF32())
      return fill;
    if (canMovePast(previous))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(previous);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
        llvm::any_of(previous->getOperands(), [&](Value operand) {
          return rootBuffer(operand) == root;
        }))
      return {};
  }
  return {};
}

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
  SmallVector<std::pair<Value, bool>> operandRoles() {
    SmallVector<std::pair<Value, bool>> roles;
    for (RowOp &member : members)
      for (OpOperand &operand : member.op->getOpOperands())
        roles.push_back({operand.get(),
                         isRowScalar(member) || member.isRowOperand(operand)});
    return roles;
  }

  bool tryAdd(RowOp candidate) {
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
          if (rank > 1 &&
              candidate.op.getMatchingIndexingMap(&operand).getNumResults() ==
                  0)
            return false;
          bool isRow = rowScalar || candidate.isRowOperand(operand);
          return llvm::is_contained(roles,
                                    std::make_pair(operand.get(), isRow));
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

  /// Whether a member writes a buffer that the group reaches through two
  /// different values (views), whose rows need not line up.
  bool viewsOfWrittenBuffer() {
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
};

/// `size` elements in vectors of `width` lanes: `body(j, inBounds)` in a loop
/// over the whole vectors, then in one over the partial last one.
void buildVectorLoops(OpBuilder &b, Location loc, Value size, int64_t width,
                      function_ref<void(Value, bool)> body) {
  Value whole = roundDown(b, loc, size, width);
  Value step = arith::ConstantIndexOp::create(b, loc, width);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  buildFor(b, loc, zero, whole, step, [&](Value j) { body(j, true); });
  buildFor(b, loc, whole, size, step, [&](Value j) { body(j, false); });
}

/// `eachRow(leading)` in a parallel loop over the rows of `buffer` (the
/// indices of its leading `rank - 1` dimensions), or once when it has none.
void buildRowLoop(OpBuilder &b, Location loc, Value buffer, unsigned rank,
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

class RowGroupEmitter {
public:
  RowGroupEmitter(RewriterBase &rewriter, RowGroup &group, int64_t vectorWidth,
                  Value copied = {}, Value copyTarget = {})
      : b(rewriter), loc(group.members.back().op->getLoc()), group(group),
        vectorWidth(vectorWidth), vectors(rewriter, loc, vectorWidth),
        copied(copied), copyTarget(copyTarget) {}

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

  /// Maps the block arguments of `member`'s operands indexed by all loops to
  /// vectors read at `indices` (an output only when the body reads it: c of
  /// the cell).
  void readFull(RowOp &member, ArrayRef<Value> indices, bool inBounds,
                IRMapping &mapping) {
    for (OpOperand &operand : member.op->getOpOperands()) {
      BlockArgument argument = member.op.getMatchingBlockArgument(&operand);
      if (member.isRowOperand(operand) || argument.use_empty())
        continue;
      Type element = argument.getType();
      Value zero = arith::ConstantOp::create(b, loc, element,
                                             b.getFloatAttr(element, 0.0));
      mapping.map(argument, vector::TransferReadOp::create(
                                b, loc, vectorOf(element), operand.get(),
                                indices, zero, ArrayRef<bool>{inBounds}));
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
      if (init == copied)
        vector::TransferWriteOp::create(b, loc, mapped, copyTarget, indices,
                                        ArrayRef<bool>{inBounds});
    }
  }

  RewriterBase &b;
  Location loc;
  RowGroup &group;
  int64_t vectorWidth;
  BodyVectorizer vectors;
  /// An output that a following copy (then erased) also writes to
  /// `copyTarget`.
  Value copied, copyTarget;
};

/// A row gather, the lowering of recur.embedding on buffers:
///   output[rows..., j] = table[index_cast(ids[rows...]), j]
/// with one id per row and rows of the table and the output unit-stride.
struct RowGather {
  linalg::GenericOp op;
  Value ids, table, output;
};

std::optional<RowGather> matchRowGather(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      llvm::any_of(op.getIteratorTypesArray(), [](IteratorType iterator) {
        return iterator != IteratorType::parallel;
      }))
    return std::nullopt;
  OpOperand *ids = op.getDpsInputOperand(0);
  OpOperand *output = op.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(output->get().getType());
  if (!isRowMap(op.getMatchingIndexingMap(ids)) ||
      !op.getMatchingIndexingMap(output).isIdentity() || !outputType ||
      !outputType.getElementType().isF32() || !outputType.isLastDimUnitStride())
    return std::nullopt;
  // The body: index_cast of the id, the last loop's index, the load, yield.
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto load = yield.getValues().size() == 1
                  ? yield.getValues()[0].getDefiningOp<memref::LoadOp>()
                  : memref::LoadOp();
  if (!load || body.getOperations().size() != 4 ||
      load.getIndices().size() != 2)
    return std::nullopt;
  auto row = load.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
  auto column = load.getIndices()[1].getDefiningOp<linalg::IndexOp>();
  auto tableType = load.getMemRefType();
  if (!row || row.getIn() != op.getMatchingBlockArgument(ids) || !column ||
      column.getDim() != op.getNumLoops() - 1 ||
      !tableType.getElementType().isF32() || !tableType.isLastDimUnitStride() ||
      !definedBefore(load.getMemRef(), op))
    return std::nullopt;
  return RowGather{op, ids->get(), load.getMemRef(), output->get()};
}

/// A parallel loop over the rows; each row's id is loaded once, and the
/// table row is copied in vectors (the partial last one masked).
void emitRowGather(RewriterBase &b, RowGather &gather, int64_t vectorWidth) {
  Location loc = gather.op.getLoc();
  unsigned rank = gather.op.getNumLoops();
  Value size = memref::DimOp::create(b, loc, gather.output, rank - 1);
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                         b.getF32FloatAttr(0.0f));
  buildRowLoop(b, loc, gather.output, rank, [&](ValueRange leading) {
    Value id = memref::LoadOp::create(b, loc, gather.ids, leading);
    Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
    buildVectorLoops(b, loc, size, vectorWidth, [&](Value j, bool inBounds) {
      Value vector = vector::TransferReadOp::create(
          b, loc, vectorType, gather.table, ValueRange{row, j}, zero,
          ArrayRef<bool>{inBounds});
      SmallVector<Value> indices(leading);
      indices.push_back(j);
      vector::TransferWriteOp::create(b, loc, vector, gather.output, indices,
                                      ArrayRef<bool>{inBounds});
    });
  });
}

/// A sum over the rows of a buffer, `out[n] += in[d..., n]` (a bias
/// gradient): loops (n, d...), n the only parallel one.
struct ColumnSum {
  linalg::GenericOp op;
  Value input, output;
  /// The scalar a `linalg.fill` (then erased) set the output to, or null.
  Value initial;
};

std::optional<ColumnSum> matchColumnSum(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || loops < 2 || op.getNumParallelLoops() != 1 ||
      op.getIteratorTypesArray()[0] != IteratorType::parallel)
    return std::nullopt;
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> rowsThenColumn;
  for (unsigned dim = 1; dim < loops; ++dim)
    rowsThenColumn.push_back(getAffineDimExpr(dim, context));
  rowsThenColumn.push_back(getAffineDimExpr(0, context));
  SmallVector<AffineMap> expected = {
      AffineMap::get(loops, 0, rowsThenColumn, context),
      AffineMap::get(loops, 0, getAffineDimExpr(0, context))};
  Value input = op.getDpsInputs()[0], output = op.getDpsInits()[0];
  auto inputType = dyn_cast<MemRefType>(input.getType());
  auto outputType = dyn_cast<MemRefType>(output.getType());
  if (op.getIndexingMapsArray() != expected || !inputType || !outputType ||
      !inputType.getElementType().isF32() ||
      !outputType.getElementType().isF32() ||
      !inputType.isLastDimUnitStride() || !outputType.isLastDimUnitStride())
    return std::nullopt;
  // The body: yield addf(value, accumulator), in either order.
  Block &body = op.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add || body.getOperations().size() != 2 ||
      !llvm::is_contained(add->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(add->getOperands(), body.getArgument(1)))
    return std::nullopt;
  return ColumnSum{op, input, output, {}};
}

/// Columns in chunks of `vectors` vectors, in parallel; each chunk's sums
/// stay in registers while the loop walks down the rows, reading a
/// contiguous piece of every row. (The loop lowering ran the parallel loop
/// over single columns and walked each down the rows: a scalar load per
/// element, a cache line per row.)
void emitColumnSum(RewriterBase &b, ColumnSum &sum, int64_t vectorWidth) {
  constexpr int64_t vectors = 8; // enough independent adds to hide latency
  Location loc = sum.op.getLoc();
  auto inputType = cast<MemRefType>(sum.input.getType());
  unsigned rank = inputType.getRank();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                         b.getF32FloatAttr(0.0f));
  Value columns = memref::DimOp::create(b, loc, sum.output, 0);
  int64_t chunk = vectors * vectorWidth;
  Value chunks = arith::CeilDivUIOp::create(b, loc, columns, index(chunk));
  SmallVector<Value> rowSizes;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    rowSizes.push_back(memref::DimOp::create(b, loc, sum.input, dim));

  auto sumChunk = [&](Value first, bool inBounds) {
    SmallVector<Value> columnOf, accumulators;
    for (int64_t v = 0; v < vectors; ++v) {
      columnOf.push_back(
          arith::AddIOp::create(b, loc, first, index(v * vectorWidth)));
      accumulators.push_back(
          sum.initial
              ? vector::BroadcastOp::create(b, loc, vectorType, sum.initial)
                    .getResult()
              : vector::TransferReadOp::create(b, loc, vectorType, sum.output,
                                               ValueRange{columnOf[v]}, zero,
                                               ArrayRef<bool>{inBounds})
                    .getResult());
    }
    // One loop per leading dimension. An inner loop sums from zero and its
    // sums are added to the outer ones after it: blocked summation, whose
    // rounding error grows with T + B rather than T * B (the order of the
    // scalar loop before, which LLVM split across registers).
    Value zeros = arith::ConstantOp::create(
        b, loc, vectorType, DenseElementsAttr::get(vectorType, 0.0f));
    std::function<SmallVector<Value>(unsigned, SmallVector<Value>, ValueRange)>
        rowLoops = [&](unsigned dim, SmallVector<Value> indices,
                       ValueRange carried) -> SmallVector<Value> {
      if (dim + 1 == rank) {
        SmallVector<Value> next;
        for (int64_t v = 0; v < vectors; ++v) {
          SmallVector<Value> at(indices);
          at.push_back(columnOf[v]);
          Value row =
              vector::TransferReadOp::create(b, loc, vectorType, sum.input, at,
                                             zero, ArrayRef<bool>{inBounds});
          next.push_back(arith::AddFOp::create(b, loc, carried[v], row));
        }
        return next;
      }
      SmallVector<Value> start(carried);
      if (dim > 0)
        start.assign(vectors, zeros);
      SmallVector<Value> sums =
          buildForWithValues(b, loc, index(0), rowSizes[dim], index(1), start,
                             [&](Value i, ValueRange inner) {
                               SmallVector<Value> deeper(indices);
                               deeper.push_back(i);
                               return rowLoops(dim + 1, deeper, inner);
                             });
      if (dim > 0)
        for (int64_t v = 0; v < vectors; ++v)
          sums[v] = arith::AddFOp::create(b, loc, carried[v], sums[v]);
      return sums;
    };
    accumulators = rowLoops(0, {}, accumulators);
    for (int64_t v = 0; v < vectors; ++v)
      vector::TransferWriteOp::create(b, loc, accumulators[v], sum.output,
                                      ValueRange{columnOf[v]},
                                      ArrayRef<bool>{inBounds});
  };

  buildParallel(
      b, loc, ValueRange{index(0)}, ValueRange{chunks}, ValueRange{index(1)},
      [&](ValueRange ivs) {
        Value first = arith::MulIOp::create(b, loc, ivs[0], index(chunk));
        Value end = arith::AddIOp::create(b, loc, first, index(chunk));
        Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                            end, columns);
        auto branches = scf::IfOp::create(b, loc, whole,
                                          /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branches.thenBlock()->getTerminator());
        sumChunk(first, /*inBounds=*/true);
        // The last chunk, past the end of the columns: masked.
        b.setInsertionPoint(branches.elseBlock()->getTerminator());
        sumChunk(first, /*inBounds=*/false);
      });
}

struct VectorizeElementwisePass
    : mlir::recur::impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth <= 0) {
      getOperation()->emitError(
          "recur-vectorize-elementwise needs a positive vector-width");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    // A reduction's output filled just before it starts from the fill's
    // value instead: the fill (a loop of its own) is gone.
    SmallVector<RowOp> rowOps;
    SmallVector<RowGather> gathers;
    SmallVector<ColumnSum> columnSums;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<RowOp> rowOp = matchRowOp(op, bf16Vectors))
        rowOps.push_back(*rowOp);
      else if (std::optional<RowGather> gather = matchRowGather(op))
        gathers.push_back(*gather);
      else if (std::optional<ColumnSum> sum = matchColumnSum(op))
        columnSums.push_back(*sum);
      else if (!bf16Vectors && matchRowOp(op, /*bf16Vectors=*/true))
        remarkMissed(op, getArgument(),
                     "this conversion to or from bf16 runs as a scalar loop",
                     "the target has no AVX512-BF16 conversions on vectors");
    });
    for (RowGather &gather : gathers) {
      rewriter.setInsertionPoint(gather.op);
      emitRowGather(rewriter, gather, vectorWidth);
      rewriter.eraseOp(gather.op);
    }
    for (ColumnSum &sum : columnSums) {
      if (linalg::FillOp fill = findInitializingFill(sum.op, sum.output)) {
        sum.initial = fill.getInputs()[0];
        rewriter.eraseOp(fill);
      }
      rewriter.setInsertionPoint(sum.op);
      emitColumnSum(rewriter, sum, vectorWidth);
      rewriter.eraseOp(sum.op);
    }
    for (RowOp &rowOp : rowOps)
      for (auto [reduction, output] :
           llvm::zip(rowOp.reductions, rowOp.op.getDpsInits()))
        if (linalg::FillOp fill = findInitializingFill(rowOp.op, output)) {
          reduction.initial = fill.getInputs()[0];
          rewriter.eraseOp(fill);
        }

    for (RowGroup &group : formGroups(rowOps)) {
      Operation *last = group.members.back().op;
      Value copied;
      linalg::CopyOp copy;
      if (linalg::GenericOp only = group.members.front().op;
          group.members.size() == 1)
        copy = matchCopiedOutput(only, only.getDpsInits(), only->getOperands(),
                                 only, copied);
      // The copy's target view must exist where the loop writes it.
      if (copy)
        moveCopyTargetBefore(rewriter, copy, last);
      rewriter.setInsertionPoint(last);
      RowGroupEmitter(rewriter, group, vectorWidth, copied,
                      copy ? copy.getOutputs()[0] : Value())
          .emit();
      for (RowOp &member : group.members)
        rewriter.eraseOp(member.op);
      if (copy)
        rewriter.eraseOp(copy);
    }
  }

  /// Row ops in program order, grouped where consecutive ones (nothing but
  /// movable ops between them) share rows.
  static SmallVector<RowGroup> formGroups(ArrayRef<RowOp> rowOps) {
    SmallVector<RowGroup> groups;
    Operation *previous = nullptr;
    for (RowOp rowOp : rowOps) {
      bool adjacent = previous && previous->getBlock() == rowOp.op->getBlock();
      for (Operation *between = previous ? previous->getNextNode() : nullptr;
           adjacent && between != rowOp.op.getOperation();
           between = between->getNextNode())
        adjacent = between && canMovePast(between);
      if (!adjacent || !groups.back().tryAdd(rowOp))
        groups.push_back({rowOp.op.getNumLoops(), {rowOp}});
      previous = rowOp.op;
    }
    return groups;
  }
};

} // namespace
