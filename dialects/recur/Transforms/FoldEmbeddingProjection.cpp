//===- FoldEmbeddingProjection.cpp - a projected table, gathered per run --===//
//
// recur.linear(recur.embedding(table, ids), w, b)
//   -> recur.embedding(recur.linear(table, w, b), ids)
//
// Both compute row ids[...] of table · wᵀ + b. The product of the whole
// table depends on weights only, so recur-outline-weight-prologue computes
// it once per binding, and each run gathers its rows instead of multiplying:
// layer 0's input projection costs no FLOPs per run.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"
#include "recur/Utils/SizeReads.h"

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FOLDEMBEDDINGPROJECTION
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

struct FoldEmbeddingIntoProjection : OpRewritePattern<LinearOp> {
  FoldEmbeddingIntoProjection(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}

  LogicalResult matchAndRewrite(LinearOp linear,
                                PatternRewriter &rewriter) const override {
    auto embedding = linear.getInput().getDefiningOp<EmbeddingOp>();
    if (!embedding)
      return rewriter.notifyMatchFailure(linear, "input is not an embedding");
    // An embedding's projection, left a GEMM per run: say why.
    auto missed = [&](const Twine &reason) {
      remarkMissed(linear, "recur-fold-embedding-projection",
                   "the projection of an embedding runs as a GEMM per run, "
                   "not a gather from a table projected once per binding",
                   reason);
      return rewriter.notifyMatchFailure(linear, reason);
    };
    if (RecurDialect::isInTrainingStep(linear))
      return missed("the weights change at every training step");
    // Reads of its T or B (a GRU's zero initial state takes B from its
    // input) read the ids' instead.
    SmallVector<tensor::DimOp> sizeReads;
    for (Operation *user : embedding->getUsers()) {
      if (user == linear)
        continue;
      tensor::DimOp dim = leadingSizeRead(user, 2);
      if (!dim)
        return missed("the embedding has other users (e.g. both directions "
                      "of a bidirectional layer)");
      sizeReads.push_back(dim);
    }
    auto tableType = cast<RankedTensorType>(embedding.getTable().getType());
    auto resultType = cast<RankedTensorType>(linear.getType());
    int64_t rows = tableType.getDimSize(0);
    int64_t columns = resultType.getShape().back();
    if (ShapedType::isDynamic(columns))
      return missed("its width is dynamic");
    if (rows * columns > maxElements)
      return missed("the projected table would hold " + Twine(rows) + " x " +
                    Twine(columns) + " elements, more than max-elements (" +
                    Twine(maxElements) + ")");
    Value bias = linear.getBias();
    if (!isWeightOnly(embedding.getTable()) ||
        !isWeightOnly(linear.getWeight()) || (bias && !isWeightOnly(bias)))
      return missed("the table, weight or bias is not computed from weights "
                    "alone");
    Value projected =
        LinearOp::create(rewriter, linear.getLoc(), embedding.getTable(),
                         linear.getWeight(), bias);
    rewriter.replaceOpWithNewOp<EmbeddingOp>(linear, resultType, projected,
                                             embedding.getIds());
    for (tensor::DimOp dim : sizeReads)
      rewriter.modifyOpInPlace(
          dim, [&] { dim.getSourceMutable().assign(embedding.getIds()); });
    rewriter.eraseOp(embedding);
    return success();
  }

  int64_t maxElements;
};

struct FoldEmbeddingProjectionPass
    : mlir::recur::impl::FoldEmbeddingProjectionBase<
          FoldEmbeddingProjectionPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldEmbeddingIntoProjection>(&getContext(), maxElements);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
