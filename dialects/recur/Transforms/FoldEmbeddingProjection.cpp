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

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FOLDEMBEDDINGPROJECTION
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// Whether `value` is computed from weights (and constants) alone, as
/// recur-outline-weight-prologue will find it.
bool isWeightOnly(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    return function && function.getArgAttr(argument.getArgNumber(),
                                           RecurDialect::kWeightAttrName);
  }
  Operation *def = value.getDefiningOp();
  return def->getNumRegions() == 0 && isPure(def) &&
         llvm::all_of(def->getOperands(), isWeightOnly);
}

struct FoldEmbeddingIntoProjection : OpRewritePattern<LinearOp> {
  FoldEmbeddingIntoProjection(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}

  LogicalResult matchAndRewrite(LinearOp linear,
                                PatternRewriter &rewriter) const override {
    if (RecurDialect::isInTrainingStep(linear))
      return rewriter.notifyMatchFailure(linear, "the weights change per run");
    auto embedding = linear.getInput().getDefiningOp<EmbeddingOp>();
    if (!embedding || !embedding->hasOneUse())
      return rewriter.notifyMatchFailure(linear, "input is not an embedding");
    auto tableType = cast<RankedTensorType>(embedding.getTable().getType());
    auto resultType = cast<RankedTensorType>(linear.getType());
    int64_t rows = tableType.getDimSize(0);
    int64_t columns = resultType.getShape().back();
    if (ShapedType::isDynamic(columns) || rows * columns > maxElements)
      return rewriter.notifyMatchFailure(linear, "projected table too large");
    Value bias = linear.getBias();
    if (!isWeightOnly(embedding.getTable()) ||
        !isWeightOnly(linear.getWeight()) || (bias && !isWeightOnly(bias)))
      return rewriter.notifyMatchFailure(linear, "operands are not weights");
    Value projected =
        LinearOp::create(rewriter, linear.getLoc(), embedding.getTable(),
                         linear.getWeight(), bias);
    rewriter.replaceOpWithNewOp<EmbeddingOp>(linear, resultType, projected,
                                             embedding.getIds());
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
