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
#include "recur/Utils/SequenceLengths.h"
#include "recur/Utils/TensorCasts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  // Ranks, rows and row ids in i64, whatever the lengths' width.
  auto lengthsType = cast<RankedTensorType>(lengths.getType());
  Type element = b.getI64Type();
  if (lengthsType.getElementType() != element)
    lengths = arith::ExtSIOp::create(
        b, loc, RankedTensorType::get(lengthsType.getShape(), element),
        lengths);
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

/// `projection` (a recur.linear of the rows of `sorted`, the y [T, B, H] of
/// a recurrence on rows sorted by length, once gathered back into the rows'
/// order: an LM's output layer) computed step by step on the active rows of
/// `sorted` and one row past them, which is zeros (the product: the bias),
/// then gathered into the rows' order while in cache: row b of step t reads
/// the row of its rank, or that padded row past its length. Returns the
/// [T, B, V] result.
Value projectStepByStep(RewriterBase &rewriter, LinearOp projection,
                        Value sorted, const LengthOrder &order) {
  Location loc = projection.getLoc();
  auto type = cast<RankedTensorType>(projection.getType());
  int64_t width = type.getDimSize(2),
          inputWidth = cast<RankedTensorType>(sorted.getType()).getDimSize(2);
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(rewriter, loc, sorted, 0),
      tensor::getMixedSize(rewriter, loc, sorted, 1),
      rewriter.getIndexAttr(width)};
  Value counts = activeRowCounts(rewriter, loc, order.sorted, sizes[0]);
  Value result =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[0]);
  Value batch = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[1]);
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, steps, one, ValueRange{result},
      [&](OpBuilder &b, Location loc, Value t, ValueRange carried) {
        Value active = activeRows(b, loc, counts, t, batch);
        // The active rows and the first padded one, if any.
        Value rows = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, active, one), batch);
        OpFoldResult zeroAttr = b.getIndexAttr(0), oneAttr = b.getIndexAttr(1);
        Value input = tensor::ExtractSliceOp::create(
            b, loc,
            RankedTensorType::get({ShapedType::kDynamic, inputWidth},
                                  type.getElementType()),
            sorted, ArrayRef<OpFoldResult>{t, zeroAttr, zeroAttr},
            ArrayRef<OpFoldResult>{oneAttr, rows, b.getIndexAttr(inputWidth)},
            ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
        Value products = LinearOp::create(b, loc, input, projection.getWeight(),
                                          projection.getBias());
        // Row b's: its rank's product, or the padded row's (the bias).
        Type element =
            cast<RankedTensorType>(order.rank.getType()).getElementType();
        Value last = arith::IndexCastOp::create(b, loc, element, active);
        Value idsInit = tensor::EmptyOp::create(
            b, loc, tensor::getMixedSizes(b, loc, order.rank), element);
        MLIRContext *context = b.getContext();
        Value ids =
            linalg::GenericOp::create(
                b, loc, TypeRange{idsInit.getType()}, ValueRange{order.rank},
                ValueRange{idsInit},
                ArrayRef<AffineMap>{
                    AffineMap::getMultiDimIdentityMap(1, context),
                    AffineMap::getMultiDimIdentityMap(1, context)},
                ArrayRef<IteratorType>{IteratorType::parallel},
                [&](OpBuilder &nb, Location loc, ValueRange args) {
                  linalg::YieldOp::create(nb, loc,
                                          ValueRange{arith::MinSIOp::create(
                                              nb, loc, args[0], last)});
                })
                .getResult(0);
        SmallVector<OpFoldResult> offsets = {t, zeroAttr, zeroAttr},
                                  stepSizes = {oneAttr, sizes[1], sizes[2]},
                                  strides = {oneAttr, oneAttr, oneAttr};
        Value step = tensor::ExtractSliceOp::create(
            b, loc,
            RankedTensorType::get({ShapedType::kDynamic, width},
                                  type.getElementType()),
            carried[0], offsets, stepSizes, strides);
        step = gatherRows(b, loc, products, ids, step);
        scf::YieldOp::create(
            b, loc,
            ValueRange{tensor::InsertSliceOp::create(
                b, loc, step, carried[0], offsets, stepSizes, strides)});
      });
  return loop.getResult(0);
}

/// `projection` (an LM's output layer, as projectStepByStep takes it) as
/// one GEMM over the rows' own order that adds the products of the tokens
/// only (a row past its length is zeros: its product, the bias, is the
/// GEMM's initial value), with the order by length, by which the GPU's
/// tiled kernel walks the tokens alone; or null where the GEMM does not
/// take its types (only f32, a weight not in panels).
Value projectTokens(RewriterBase &rewriter, LinearOp projection, Value lengths,
                    const LengthOrder &order) {
  Location loc = projection.getLoc();
  Value input = projection.getInput(), weight = projection.getWeight();
  auto type = cast<RankedTensorType>(projection.getType());
  auto isF32 = [](Value value) { return getElementTypeOrSelf(value).isF32(); };
  if (cast<RankedTensorType>(weight.getType()).getRank() != 2 ||
      !isF32(input) || !isF32(weight) || !isF32(projection.getResult()))
    return {};
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(rewriter, loc, input, 0),
      tensor::getMixedSize(rewriter, loc, input, 1),
      rewriter.getIndexAttr(type.getDimSize(2))};
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  MLIRContext *context = rewriter.getContext();
  if (Value bias = projection.getBias())
    init = linalg::GenericOp::create(
               rewriter, loc, TypeRange{init.getType()}, ValueRange{bias},
               ValueRange{init},
               ArrayRef<AffineMap>{
                   AffineMap::get(3, 0, getAffineDimExpr(2, context), context),
                   AffineMap::getMultiDimIdentityMap(3, context)},
               SmallVector<IteratorType>(3, IteratorType::parallel),
               [](OpBuilder &nb, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nb, loc, args[0]);
               })
               .getResult(0);
  else
    init = linalg::FillOp::create(
               rewriter, loc,
               ValueRange{arith::ConstantOp::create(
                   rewriter, loc, rewriter.getZeroAttr(type.getElementType()))},
               ValueRange{init})
               .getResult(0);
  return activeRowsMatmulTransposed(
      rewriter, loc, input, weight, lengths,
      tokensBeforeSteps(rewriter, loc, lengths, sizes[0]), order.order, init);
}

struct SortByLengthPass
    : mlir::recur::impl::SortByLengthBase<SortByLengthPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<RNNOp> recurrences;
    getOperation()->walk([&](RNNOp op) {
      if (op.getLengths() && !op.getLengthsSorted())
        recurrences.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (RNNOp op : recurrences)
      sort(rewriter, op);
    // An LM's output layer reads the last y (or both directions' y,
    // concatenated) alone: its product runs on the active rows (the
    // tokens, on the GPU).
    SmallVector<LinearOp> projections;
    getOperation()->walk([&](LinearOp linear) {
      Value input = linear.getInput();
      if (input.hasOneUse() &&
          !cast<RankedTensorType>(linear.getType()).isDynamicDim(2) &&
          cast<RankedTensorType>(input.getType()).getRank() == 3)
        projections.push_back(linear);
    });
    for (LinearOp projection : projections) {
      rewriter.setInsertionPoint(projection);
      std::optional<SortedRows> rows =
          sortedRows(rewriter, projection.getInput());
      if (!rows)
        continue;
      if (!projectActiveRows) {
        if (Value tokens =
                projectTokens(rewriter, projection, rows->lengths, rows->order))
          rewriter.replaceOp(projection, castTo(rewriter, projection.getLoc(),
                                                tokens, projection.getType()));
        continue;
      }
      rewriter.replaceOp(projection,
                         castTo(rewriter, projection.getLoc(),
                                projectStepByStep(rewriter, projection,
                                                  rows->value, rows->order),
                                projection.getType()));
    }
  }

  /// A value in the rows' order whose rows in length order exist too.
  struct SortedRows {
    Value value;       // the rows in length order
    Value lengths;     // the lengths they are ordered by
    LengthOrder order; // that order
  };

  /// `value`'s rows in length order: a recurrence's y gathered back into
  /// the rows' order (its sorted y), or a concatenation of such along the
  /// features (the concatenation of theirs, built at the insertion point).
  std::optional<SortedRows> sortedRows(OpBuilder &b, Value value) {
    if (auto known = restored.find(value); known != restored.end())
      return known->second;
    auto concat = value.getDefiningOp<tensor::ConcatOp>();
    auto type = cast<RankedTensorType>(value.getType());
    if (!concat || concat.getDim() != uint64_t(type.getRank() - 1))
      return std::nullopt;
    SmallVector<Value> parts;
    std::optional<SortedRows> first;
    for (Value part : concat.getInputs()) {
      auto rows = restored.find(part);
      if (rows == restored.end() ||
          (first && (rows->second.lengths != first->lengths ||
                     rows->second.order.rank != first->order.rank)))
        return std::nullopt;
      if (!first)
        first = rows->second;
      parts.push_back(
          castTo(b, concat.getLoc(), rows->second.value, part.getType()));
    }
    return SortedRows{
        tensor::ConcatOp::create(b, concat.getLoc(), concat.getDim(), parts),
        first->lengths, first->order};
  }

  // Per lengths value, its order; per y gathered back into the rows' order,
  // its rows in length order.
  DenseMap<Value, LengthOrder> orders;
  DenseMap<Value, SortedRows> restored;

  void sort(IRRewriter &rewriter, RNNOp op) {
    Block &cell = op.getCell();
    // The cell runs on the prefix: its row count must be dynamic.
    for (BlockArgument argument :
         cell.getArguments().take_front(1 + op.getInit().size()))
      if (!cast<RankedTensorType>(argument.getType()).isDynamicDim(0)) {
        remarkMissed(op, getArgument(), "every step runs all rows, masked",
                     "the cell's batch is static");
        return;
      }
    // A capture with a row per batch row would have to be reordered too.
    for (Value capture : op.getCaptures())
      if (auto type = dyn_cast<RankedTensorType>(capture.getType());
          type && type.getRank() > 0 && type.isDynamicDim(0)) {
        remarkMissed(op, getArgument(), "every step runs all rows, masked",
                     "a capture has a dynamic leading dimension (a value per "
                     "row, which the order would have to follow)");
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
    if (std::optional<SortedRows> rows = sortedRows(rewriter, input);
        rows && rows->lengths == lengths)
      sortedInput = rows->value;
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
    auto sorted = RNNOp::create(rewriter, loc, op.getY().getType(),
                                op.getFinalStates().getTypes(), sortedInput,
                                init, op.getCaptures(), order.sorted,
                                op.getReverse(), /*lengths_sorted=*/true);
    rewriter.inlineRegionBefore(op.getBody(), sorted.getBody(),
                                sorted.getBody().end());
    Value y = castTo(rewriter, loc,
                     gatherStepRows(rewriter, loc, sorted.getY(), order.rank),
                     op.getY().getType());
    // Each final state back in the rows' order right before its first
    // reader, so that the next layer of a stack can follow this one at once
    // (recur-wavefront).
    for (auto [state, sortedState] :
         llvm::zip_equal(op.getFinalStates(), sorted.getFinalStates())) {
      Operation *first = nullptr;
      for (Operation *user : state.getUsers()) {
        Operation *reader = op->getBlock()->findAncestorOpInBlock(*user);
        if (reader && (!first || reader->isBeforeInBlock(first)))
          first = reader;
      }
      if (!first)
        continue;
      rewriter.setInsertionPoint(first);
      rewriter.replaceAllUsesWith(
          state, castTo(rewriter, loc,
                        gatherRows(rewriter, loc, sortedState, order.rank),
                        state.getType()));
    }
    rewriter.replaceAllUsesWith(op.getY(), y);
    rewriter.eraseOp(op);
    restored[y] = {sorted.getY(), lengths, order};
  }
};

} // namespace
