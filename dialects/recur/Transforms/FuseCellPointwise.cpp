//===- FuseCellPointwise.cpp - a cell's pointwise ops as few loop nests ---===//
//
// A traced cell's step is a loop nest per op (an add, each gate's sigmoid, a
// layer norm's five); each reads and writes a [B, n] tensor. Inside every
// recur.rnn cell this fuses them, as linalg's elementwise fusion does: a
// pointwise generic whose result is only sliced (a chunk of the gates) is
// split into a generic per slice, on its operands' slices; then a producer
// read by one op only is fused into it, so the gates go from the products
// through the nonlinearities to the new state in registers. Elementwise
// arith on tensors (a derived backward's gradient sums) becomes generics
// first, so that it fuses too, and a zero fill that inserted slices cover
// (a gradient assembled from its gates') is dropped.
//
//===----------------------------------------------------------------------===//

#include "RowwiseOps.h"
#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FUSECELLPOINTWISE
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// A generic whose loops are all parallel, whose one result is written at
/// the loop position (and not read), whose operands are read at positions
/// that are loop indices (broadcasts allowed) and whose body does not read
/// the indices: each element of its result depends on the matching
/// elements of its operands only.
bool isSliceablePointwise(linalg::GenericOp generic) {
  // A body reading its loop indices would see the slice's, not the whole's.
  if (generic.getNumResults() != 1 || generic.hasIndexSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)) ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return false;
  return llvm::all_of(generic.getDpsInputOperands(), [&](OpOperand *input) {
    return generic.getMatchingIndexingMap(input).isProjectedPermutation();
  });
}

/// The size of `tensor`'s dimension `dim` as its type or the tensor.empty
/// it was made from says (through the ops that write into one), or null.
OpFoldResult sizeOf(Value tensor, unsigned dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return IntegerAttr::get(IndexType::get(tensor.getContext()),
                            type.getDimSize(dim));
  if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>())
    return empty.getMixedSizes()[dim];
  if (auto result = dyn_cast<OpResult>(tensor))
    if (auto writer = dyn_cast<DestinationStyleOpInterface>(result.getOwner()))
      return sizeOf(writer.getTiedOpOperand(result)->get(), dim);
  return {};
}

/// Replaces `slice` by `value`, cast to the slice's type where its static
/// sizes differ.
void replaceSlice(PatternRewriter &rewriter, tensor::ExtractSliceOp slice,
                  Value value) {
  if (value.getType() != slice.getType())
    value = tensor::CastOp::create(rewriter, slice.getLoc(), slice.getType(),
                                   value);
  rewriter.replaceOp(slice, value);
}

/// extract_slice(generic(a, b, ...)) -> generic(slice(a), slice(b), ...),
/// where the generic is pointwise and only ever sliced: each slice computes
/// its own columns, nothing twice.
struct SplitSlicedPointwise : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto generic = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!generic || !isSliceablePointwise(generic) || !slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getType().getRank() ||
        !llvm::all_of(generic->getUsers(), [](Operation *user) {
          return isa<tensor::ExtractSliceOp>(user);
        }))
      return failure();
    Location loc = slice.getLoc();
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    SmallVector<Value> inputs;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      SmallVector<OpFoldResult> inputOffsets, inputSizes;
      for (unsigned result = 0; result < map.getNumResults(); ++result) {
        unsigned loop = map.getDimPosition(result);
        inputOffsets.push_back(offsets[loop]);
        inputSizes.push_back(sizes[loop]);
      }
      inputs.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, input->get(), inputOffsets, inputSizes,
          SmallVector<OpFoldResult>(map.getNumResults(),
                                    rewriter.getIndexAttr(1))));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         getElementTypeOrSelf(slice.getType()));
    auto split = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init,
        generic.getIndexingMapsArray(), generic.getIteratorTypesArray());
    rewriter.cloneRegionBefore(generic.getRegion(), split.getRegion(),
                               split.getRegion().begin());
    replaceSlice(rewriter, slice, split.getResult(0));
    return success();
  }
};

/// extract_slice(x) -> x where the slice is all of x (a row's statistic,
/// one value per row, under a slice of columns of the gates), its sizes
/// those x was made with: one view less between the loop nests.
struct FoldWholeSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    Value source = slice.getSource();
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getType().getRank())
      return failure();
    for (auto [dim, offset, size] : llvm::enumerate(slice.getMixedOffsets(),
                                                    slice.getMixedSizes())) {
      OpFoldResult whole = sizeOf(source, dim);
      if (!isZeroInteger(offset) || !whole ||
          !isEqualConstantIntOrValue(size, whole))
        return failure();
    }
    replaceSlice(rewriter, slice, source);
    return success();
  }
};

/// A reduction whose output starts from a fill that other ops read too (CSE
/// merges a traced cell's zero fills): given a fill of its own, so that it
/// writes in place, not into a copy bufferization would make, and its
/// kernel starts from the value.
struct OwnFillPerReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp generic,
                                PatternRewriter &rewriter) const override {
    if (generic.getNumReductionLoops() == 0 ||
        !generic.hasPureTensorSemantics())
      return failure();
    bool changed = false;
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      auto empty = fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()
                        : tensor::EmptyOp();
      if (!empty || fill->hasOneUse())
        continue;
      rewriter.setInsertionPoint(generic);
      Value own = tensor::EmptyOp::create(rewriter, empty.getLoc(),
                                          empty.getMixedSizes(),
                                          empty.getType().getElementType());
      own = linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs(),
                                   own)
                .getResult(0);
      rewriter.modifyOpInPlace(generic, [&] { init.assign(own); });
      changed = true;
    }
    return success(changed);
  }
};

/// fill(zeros) -> insert_slice ... -> insert_slice, where the inserted
/// slices cover the whole tensor between them (a gradient assembled from its
/// gates'): the fill's values are never read, and the chain starts from the
/// tensor.empty it filled instead, one loop nest less.
struct DropOverwrittenFill : OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::FillOp fill,
                                PatternRewriter &rewriter) const override {
    if (!fill.hasPureTensorSemantics() || fill->getNumResults() != 1)
      return failure();
    Value whole = fill.getResult(0);
    auto type = dyn_cast<RankedTensorType>(whole.getType());
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    if (!type || !empty)
      return failure();
    SmallVector<OpFoldResult> sizes = empty.getMixedSizes();
    // Each insert covers all of every dimension but one, the same for all,
    // along which the static pieces must tile [0, size).
    std::optional<unsigned> along;
    SmallVector<std::pair<int64_t, int64_t>> pieces;
    for (Value dest = whole; dest.hasOneUse();) {
      auto insert = dyn_cast<tensor::InsertSliceOp>(*dest.getUsers().begin());
      if (!insert || insert.getDest() != dest || !insert.hasUnitStride() ||
          insert.getSourceType().getRank() != type.getRank())
        break;
      std::optional<unsigned> partial;
      for (unsigned dim = 0; dim < type.getRank(); ++dim) {
        OpFoldResult offset = insert.getMixedOffsets()[dim],
                     size = insert.getMixedSizes()[dim];
        if (isZeroInteger(offset) &&
            isEqualConstantIntOrValue(size, sizes[dim]))
          continue;
        if (partial)
          return failure();
        partial = dim;
      }
      if (!partial)
        return failure();
      if (along && *along != *partial)
        return failure();
      along = partial;
      std::optional<int64_t> start =
          getConstantIntValue(insert.getMixedOffsets()[*along]);
      std::optional<int64_t> size =
          getConstantIntValue(insert.getMixedSizes()[*along]);
      if (!start || !size)
        return failure();
      pieces.push_back({*start, *size});
      dest = insert.getResult();
    }
    if (!along || type.isDynamicDim(*along))
      return failure();
    llvm::sort(pieces);
    int64_t covered = 0;
    for (auto [start, size] : pieces) {
      if (start != covered)
        return failure();
      covered += size;
    }
    if (covered != type.getDimSize(*along))
      return failure();
    rewriter.replaceOp(fill, empty);
    return success();
  }
};

/// A pointwise producer read by several ops, fused into the first of them
/// (linalg's elementwise fusion), which then also writes the producer's
/// value for the readers after it: computed once, in one loop nest less
/// (an sLSTM's stabiliser, read by both exponential gates and carried as
/// state; an MI-LSTM's products, read by the gates' sum and its terms).
/// linalg's pattern would keep the producer for its other readers and
/// compute it twice. Not into a reduction: its loop nest writes a row's
/// statistic, not the row's values.
struct FuseIntoFirstReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (consumer.getNumReductionLoops() != 0)
      return failure();
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->getBlock() != consumer->getBlock() ||
          !linalg::areElementwiseOpsFusable(input))
        continue;
      bool othersAfter = true, others = false;
      for (Operation *user : producer->getUsers()) {
        if (user == consumer)
          continue;
        others = true;
        othersAfter &= user->getBlock() == consumer->getBlock() &&
                       consumer->isBeforeInBlock(user);
      }
      if (!others || !othersAfter)
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, input);
      if (failed(fused))
        return failure();
      // The fused op may still read the producer (the consumer read two of
      // its values): it is fused again then, as the producer's one reader.
      Operation *fusedOp = fused->fusedOp;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != fusedOp;
        });
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct FuseCellPointwisePass
    : mlir::recur::impl::FuseCellPointwiseBase<FuseCellPointwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitSlicedPointwise, FoldWholeSlice, OwnFillPerReduction,
               DropOverwrittenFill>(&getContext());
    // A row's statistic kept as [B, 1] (a traced mean(keepdim=True)) as the
    // [B] it is, its reshapes gone: one value per row to the loop nests.
    linalg::ControlDropUnitDims unitDims;
    linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
    linalg::populateFoldUnitExtentDimsCanonicalizationPatterns(patterns,
                                                               unitDims);
    // Elementwise arith on tensors (a derived backward's gradient sums) as
    // generics first, so that they fuse with what they add.
    linalg::populateElementwiseToLinalgConversionPatterns(patterns);
    // A producer read by one op only: fused, it is computed once still.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return producer &&
                 llvm::all_of(producer->getUsers(), [&](Operation *user) {
                   return user == fused->getOwner();
                 });
        });
    patterns.add<FuseIntoFirstReader>(&getContext());
    // Inputs a fusion made twice (two producers' reads of one slice) once.
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<RNNOp> recurrences;
    getOperation()->walk([&](RNNOp op) { recurrences.push_back(op); });
    for (RNNOp op : recurrences) {
      if (failed(applyPatternsGreedily(op.getBody(), frozen))) {
        op.emitError() << getArgument()
                       << ": the rewrites of this cell did not converge";
        return signalPassFailure();
      }
      // A producer fused twice into one nest (FuseIntoFirstReader) computes
      // once. Within the nests' bodies only: CSE over the cell would merge
      // the reductions' fills again.
      IRRewriter rewriter(&getContext());
      DominanceInfo dominance;
      op.getBody().walk([&](linalg::GenericOp generic) {
        eliminateCommonSubExpressions(rewriter, dominance, generic);
      });
      // What recur-hoist-input-projection took out of the cell (a layer
      // norm of the input product), the same way: it runs over T·B rows.
      std::optional<RowChain> chain = rowChainInto(op);
      if (!chain)
        continue;
      SmallVector<Operation *> ops(chain->ops);
      for (Operation *user : chain->rows->getUsers())
        if (isRowChainLeaf(user))
          ops.push_back(user);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (failed(applyOpPatternsGreedily(ops, frozen, config))) {
        op.emitError() << getArgument()
                       << ": the rewrites of this recurrence's input rows "
                          "did not converge";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
