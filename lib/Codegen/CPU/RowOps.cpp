//===- RowOps.cpp - row ops and their groups on vectors -------------------===//
//
// Row groups (../RowOps.h), emitted on the CPU:
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

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

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
