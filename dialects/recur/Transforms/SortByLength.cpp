//===- SortByLength.cpp - a packed batch's rows in order of length --------===//
//
// A recurrence with sequence lengths runs on its rows ordered by length,
// longest first (stable, as pack_padded_sequence's enforce_sorted=False),
// so that the rows with a step at time t are a prefix and each step can run
// on those rows only (recur.rnn's `sorted`, which the lowering uses):
//
//   %y, %h = recur.rnn %x init(%h0) lengths(%len)
// becomes
//   %rank  = rank of each row in that order              [B] (B² compares)
//   %order = the row at each rank                        [B]
//   %ys, %hs = recur.rnn gather(%x, order) init(gather(%h0, order))
//                  lengths(gather(%len, order)) sorted
//   %y = gather(%ys, rank), %h = gather(%hs, rank)
//
// The gathers copy rows (the CPU runs them as vector row copies). A layer
// whose input is the previous layer's result with the same lengths takes
// that layer's rows in order as they are, and an embedding's rows are
// gathered by sorting its ids instead, so that a stack or an LM sorts its
// input once and restores the order once.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/GatherRows.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_SORTBYLENGTH
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;
using utils::IteratorType;

namespace {

/// The rows of a batch in order of length, longest first, ties by row.
struct LengthOrder {
  Value rank;   // [B]: the position of row b in the order
  Value order;  // [B]: the row at position r
  Value sorted; // [B]: the lengths in that order
};

/// A [B] tensor of `lengths`' type, each element the sum over b' of what
/// `term` gives for (the element's index, b', lengths[b] / lengths[b']).
Value sumOverRows(
    OpBuilder &b, Location loc, Value lengths, Value source,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value, Value)>
        term) {
  auto type = cast<RankedTensorType>(lengths.getType());
  Type element = type.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, lengths), element);
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  MLIRContext *context = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, context),
             d1 = getAffineDimExpr(1, context);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{source, source},
             ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(2, 0, d0, context),
                                 AffineMap::get(2, 0, d1, context),
                                 AffineMap::get(2, 0, d0, context)},
             ArrayRef<IteratorType>{IteratorType::parallel,
                                    IteratorType::reduction},
             [&](OpBuilder &nb, Location loc, ValueRange args) {
               Value i = linalg::IndexOp::create(nb, loc, 0);
               Value j = linalg::IndexOp::create(nb, loc, 1);
               Value add = term(nb, loc, i, j, args[0], args[1]);
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::AddIOp::create(nb, loc, args[2], add)});
             })
      .getResult(0);
}

LengthOrder orderByLength(OpBuilder &b, Location loc, Value lengths) {
  Type element = cast<RankedTensorType>(lengths.getType()).getElementType();
  auto constant = [&](OpBuilder &nb, Location loc, int64_t value) -> Value {
    return arith::ConstantOp::create(nb, loc,
                                     nb.getIntegerAttr(element, value));
  };
  // rank[b] = #{b' : len[b'] > len[b], or len[b'] = len[b] and b' < b}.
  Value rank = sumOverRows(
      b, loc, lengths, lengths,
      [&](OpBuilder &nb, Location loc, Value row, Value other, Value length,
          Value otherLength) -> Value {
        using arith::CmpIPredicate;
        Value longer = arith::CmpIOp::create(nb, loc, CmpIPredicate::sgt,
                                             otherLength, length);
        Value tie = arith::AndIOp::create(
            nb, loc,
            arith::CmpIOp::create(nb, loc, CmpIPredicate::eq, otherLength,
                                  length),
            arith::CmpIOp::create(nb, loc, CmpIPredicate::ult, other, row));
        return arith::SelectOp::create(
            nb, loc, arith::OrIOp::create(nb, loc, longer, tie),
            constant(nb, loc, 1), constant(nb, loc, 0));
      });
  // order[r] = the b with rank[b] = r.
  Value order = sumOverRows(
      b, loc, lengths, rank,
      [&](OpBuilder &nb, Location loc, Value position, Value row, Value,
          Value rowRank) -> Value {
        Value here = arith::CmpIOp::create(
            nb, loc, arith::CmpIPredicate::eq, rowRank,
            arith::IndexCastOp::create(nb, loc, element, position));
        return arith::SelectOp::create(
            nb, loc, here, arith::IndexCastOp::create(nb, loc, element, row),
            constant(nb, loc, 0));
      });
  // The lengths as [B, 1] rows, gathered.
  Value column = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          {cast<RankedTensorType>(lengths.getType()).getDimSize(0), 1},
          element),
      lengths, ArrayRef<ReassociationIndices>{{0, 1}});
  Value sorted = gatherRows(b, loc, column, order);
  sorted = tensor::CollapseShapeOp::create(
      b, loc, sorted, ArrayRef<ReassociationIndices>{{0, 1}});
  return {rank, order, sorted};
}

/// [T, B] ids of the rows of `sequence` ([T, B, n], as [T·B, n]) that
/// `rows` ([B]) picks at every step: t·B + rows[b].
Value stepRowIds(OpBuilder &b, Location loc, Value sequence, Value rows) {
  Type element = cast<RankedTensorType>(rows.getType()).getElementType();
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, sequence, 0),
                                     tensor::getMixedSize(b, loc, sequence, 1)};
  Value batch = getValueOrCreateConstantIndexOp(b, loc, sizes[1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, element);
  MLIRContext *context = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{rows},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 AffineMap::get(2, 0, getAffineDimExpr(1, context), context),
                 AffineMap::getMultiDimIdentityMap(2, context)},
             ArrayRef<IteratorType>{IteratorType::parallel,
                                    IteratorType::parallel},
             [&](OpBuilder &nb, Location loc, ValueRange args) {
               Value t = linalg::IndexOp::create(nb, loc, 0);
               Value first = arith::MulIOp::create(nb, loc, t, batch);
               Value id = arith::AddIOp::create(
                   nb, loc, arith::IndexCastOp::create(nb, loc, element, first),
                   args[0]);
               linalg::YieldOp::create(nb, loc, id);
             })
      .getResult(0);
}

/// `sequence` [T, B, n] with its rows picked by `rows` at every step.
Value gatherStepRows(OpBuilder &b, Location loc, Value sequence, Value rows) {
  Value table = tensor::CollapseShapeOp::create(
      b, loc, sequence, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  return gatherRows(b, loc, table, stepRowIds(b, loc, sequence, rows));
}

/// ids [T, B] with their rows picked by `rows` at every step: ids[t,
/// rows[b]], as the step rows of ids viewed as [T, B, 1].
Value gatherIdRows(OpBuilder &b, Location loc, Value ids, Value rows) {
  Value sequence = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          {cast<RankedTensorType>(ids.getType()).getDimSize(0),
           cast<RankedTensorType>(ids.getType()).getDimSize(1), 1},
          cast<RankedTensorType>(ids.getType()).getElementType()),
      ids, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value picked = gatherStepRows(b, loc, sequence, rows);
  return tensor::CollapseShapeOp::create(
      b, loc, picked, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  return value.getType() == type
             ? value
             : tensor::CastOp::create(b, loc, type, value).getResult();
}

struct SortByLengthPass
    : mlir::recur::impl::SortByLengthBase<SortByLengthPass> {
  void runOnOperation() override {
    SmallVector<RNNOp> recurrences;
    getOperation()->walk([&](RNNOp op) {
      if (op.getLengths() && !op.getLengthsSorted())
        recurrences.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Per lengths value, its order; per restored y, the rows in order.
    DenseMap<Value, LengthOrder> orders;
    DenseMap<Value, std::pair<Value, Value>> restored;
    for (RNNOp op : recurrences)
      sort(rewriter, op, orders, restored);
  }

  void sort(IRRewriter &rewriter, RNNOp op,
            DenseMap<Value, LengthOrder> &orders,
            DenseMap<Value, std::pair<Value, Value>> &restored) {
    Block &cell = op.getCell();
    // The cell runs on the prefix: its row count must be dynamic.
    for (BlockArgument argument :
         cell.getArguments().take_front(1 + op.getInit().size()))
      if (!cast<RankedTensorType>(argument.getType()).isDynamicDim(0)) {
        remarkMissed(op, getArgument(), "every step runs all rows, masked",
                     "the cell's batch is static");
        return;
      }
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value lengths = op.getLengths();
    auto known = orders.find(lengths);
    if (known == orders.end() ||
        known->second.rank.getParentBlock() != op->getBlock())
      known =
          orders
              .insert_or_assign(lengths, orderByLength(rewriter, loc, lengths))
              .first;
    LengthOrder order = known->second;

    Value input = op.getInput();
    Value sortedInput;
    if (auto previous = restored.find(input);
        previous != restored.end() && previous->second.first == lengths)
      sortedInput = previous->second.second;
    else if (auto embedding = input.getDefiningOp<EmbeddingOp>();
             embedding &&
             cast<RankedTensorType>(embedding.getIds().getType()).getRank() ==
                 2)
      sortedInput = EmbeddingOp::create(
          rewriter, loc, embedding.getTable(),
          gatherIdRows(rewriter, loc, embedding.getIds(), order.order));
    else
      sortedInput = gatherStepRows(rewriter, loc, input, order.order);
    sortedInput = castTo(rewriter, loc, sortedInput, input.getType());
    SmallVector<Value> init;
    for (Value state : op.getInit())
      init.push_back(castTo(rewriter, loc,
                            gatherRows(rewriter, loc, state, order.order),
                            state.getType()));
    auto sorted = RNNOp::create(
        rewriter, loc, op.getY().getType(), op.getFinalStates().getTypes(),
        sortedInput, init, op.getCaptures(),
        castTo(rewriter, loc, order.sorted, lengths.getType()), op.getReverse(),
        /*lengths_sorted=*/true);
    rewriter.inlineRegionBefore(op.getBody(), sorted.getBody(),
                                sorted.getBody().end());
    SmallVector<Value> results = {castTo(
        rewriter, loc, gatherStepRows(rewriter, loc, sorted.getY(), order.rank),
        op.getY().getType())};
    for (Value state : sorted.getFinalStates())
      results.push_back(castTo(rewriter, loc,
                               gatherRows(rewriter, loc, state, order.rank),
                               state.getType()));
    restored[results[0]] = {lengths, sorted.getY()};
    rewriter.replaceOp(op, results);
  }
};

} // namespace
