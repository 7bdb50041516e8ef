//===- DenseOps.cpp - the ops around the recurrences ----------------------===//
//
// recur.embedding (a gather), linear (a product with the PyTorch weight
// layout), transpose, log_softmax and cross_entropy as linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "recur/Utils/GatherRows.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace {

struct LowerEmbedding : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    // The runtime checks that ids lie in [0, vocab) before running.
    Value result =
        gatherRows(rewriter, op.getLoc(), op.getTable(), op.getIds());
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

/// The lengths of the recurrence (a recur.rnn marked `sorted`, or a
/// wavefront of them) that alone reads `op`'s [T, B, N] rows as its input
/// (a product hoisted out of its cell), or null: its rows are sorted by
/// them, and it reads the active rows of each step only.
Value sortedLengthsOfReader(LinearOp op) {
  if (!op->hasOneUse() ||
      cast<RankedTensorType>(op.getInput().getType()).getRank() != 3)
    return {};
  Operation *user = *op->user_begin();
  if (auto rnn = dyn_cast<RNNOp>(user);
      rnn && rnn.getLengthsSorted() && rnn.getInput() == op.getResult())
    return rnn.getLengths();
  if (auto wavefront = dyn_cast<RNNWavefrontOp>(user);
      wavefront && wavefront.getInput() == op.getResult())
    return wavefront.getLengths();
  return {};
}

/// The sizes of `op`'s result: the input's leading ones, then N.
SmallVector<OpFoldResult> resultSizes(OpBuilder &b, LinearOp op) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, op.getLoc(), op.getInput());
  sizes.back() = b.getIndexAttr(op.getType().getShape().back());
  return sizes;
}

/// What `op`'s products add to over `sizes`: the bias broadcast, or zeros.
Value productsInit(Emitter &emit, LinearOp op, ArrayRef<OpFoldResult> sizes) {
  return op.getBias() ? emit.broadcastLast(op.getBias(), sizes)
                      : emit.filled(sizes, op.getType().getElementType(), 0.0);
}

/// `op`'s product for the rows its reader reads only: at each step t, its
/// active rows (a prefix, the batch sorted by `lengths`), one GEMM of those
/// rows per step, written in place into the [T, B, N] result. The other
/// rows stay unset: the recurrence never reads them.
Value activeRowsProduct(PatternRewriter &rewriter, LinearOp op, Value lengths) {
  Location loc = op.getLoc();
  Emitter emit(rewriter, loc);
  auto resultType = cast<RankedTensorType>(op.getType());
  SmallVector<OpFoldResult> sizes = resultSizes(rewriter, op);
  Value counts = activeRowCounts(rewriter, loc, lengths, sizes[0]);
  Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[0]);
  Value result = emit.empty(sizes, resultType.getElementType());
  auto loop = scf::ForOp::create(
      rewriter, loc, emit.constantIndex(0), steps, emit.constantIndex(1),
      ValueRange{result},
      [&](OpBuilder &b, Location loc, Value t, ValueRange carried) {
        Emitter emit(b, loc);
        Value rows = activeRows(b, loc, counts, t, sizes[1]);
        Value x = leadingRows(b, loc, op.getInput(), rows, t);
        Value target = leadingRows(b, loc, carried[0], rows, t);
        Value init =
            op.getBias()
                ? emit.broadcastLastInto(op.getBias(), target)
                : linalg::FillOp::create(b, loc,
                                         ValueRange{emit.constantFloat(
                                             resultType.getElementType(), 0.0)},
                                         ValueRange{target})
                      .getResult(0);
        Value rowsProduct = emit.accumulateMatmulTransposed(
            emit.productInput(x, op.getWeight()), op.getWeight(), init);
        scf::YieldOp::create(b, loc,
                             insertRows(b, loc, rowsProduct, carried[0],
                                        b.getIndexAttr(0), rows, t));
      });
  return loop.getResult(0);
}

/// `op`'s product for the tokens of its reader's packed batch, as one GEMM
/// (the GPU's): the rows past a length hold the bias, never read.
Value activeRowsGemm(PatternRewriter &rewriter, LinearOp op, Value lengths) {
  Location loc = op.getLoc();
  Emitter emit(rewriter, loc);
  SmallVector<OpFoldResult> sizes = resultSizes(rewriter, op);
  Value init = productsInit(emit, op, sizes);
  return activeRowsMatmulTransposed(
      rewriter, loc, op.getInput(), op.getWeight(), lengths,
      tokensBeforeSteps(rewriter, loc, lengths, sizes[0]), /*order=*/Value(),
      init);
}

struct LowerLinear : OpRewritePattern<LinearOp> {
  LowerLinear(MLIRContext *context, bool activeRowProducts)
      : OpRewritePattern(context), activeRowProducts(activeRowProducts) {}
  bool activeRowProducts;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    if (Value lengths = sortedLengthsOfReader(op)) {
      // Step by step for the CPU's GEMM kernels; one GEMM over the tokens
      // for the GPU's, whose per-step GEMMs in a persistent kernel would be
      // plain loop nests. A weight in panels is the CPU's.
      if (activeRowProducts) {
        replaceWithCasts(rewriter, op,
                         activeRowsProduct(rewriter, op, lengths));
        return success();
      }
      auto isF32 = [](Value value) {
        return getElementTypeOrSelf(value).isF32();
      };
      if (cast<RankedTensorType>(op.getWeight().getType()).getRank() == 2 &&
          isF32(op.getInput()) && isF32(op.getWeight()) &&
          isF32(op.getResult())) {
        replaceWithCasts(rewriter, op, activeRowsGemm(rewriter, op, lengths));
        return success();
      }
    }
    Emitter emit(rewriter, op.getLoc());
    SmallVector<OpFoldResult> sizes = resultSizes(rewriter, op);
    Value input = emit.productInput(op.getInput(), op.getWeight());
    Value init = productsInit(emit, op, sizes);
    replaceWithCasts(
        rewriter, op,
        emit.accumulateMatmulTransposed(input, op.getWeight(), init));
    return success();
  }
};

struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
        op.getPermutation(), [&](int64_t dim) { return inputSizes[dim]; });
    Value init =
        Emitter(rewriter, loc).empty(sizes, op.getType().getElementType());
    auto transpose = linalg::TransposeOp::create(rewriter, loc, op.getInput(),
                                                 init, op.getPermutation());
    replaceWithCasts(rewriter, op, transpose.getResult());
    return success();
  }
};

struct LowerLogSoftmax : OpRewritePattern<LogSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Emitter emit(rewriter, op.getLoc());
    Value input = op.getInput();
    auto [max, logSum] = emit.logSumExpParts(input);
    unsigned rank = cast<RankedTensorType>(input.getType()).getRank();
    auto type = cast<RankedTensorType>(input.getType());
    Value init = emit.empty(tensor::getMixedSizes(rewriter, op.getLoc(), input),
                            type.getElementType());
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    Value result =
        linalg::GenericOp::create(
            rewriter, op.getLoc(), TypeRange{init.getType()},
            ValueRange{input, max, logSum}, ValueRange{init},
            ArrayRef<AffineMap>{identity, emit.leadingMap(rank),
                                emit.leadingMap(rank), identity},
            SmallVector<IteratorType>(rank, IteratorType::parallel),
            [](OpBuilder &b, Location loc, ValueRange args) {
              Value shifted = arith::SubFOp::create(b, loc, args[0], args[1]);
              linalg::YieldOp::create(
                  b, loc,
                  arith::SubFOp::create(b, loc, shifted, args[2]).getResult());
            })
            .getResult(0);
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

struct LowerCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    Value logits = op.getLogits();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    Type elementType = logitsType.getElementType();
    auto [max, logSum] = emit.logSumExpParts(logits);
    // loss = max + log(sum(exp(x - max))) - x[target]; the runtime checks that
    // targets lie in [0, C).
    Value perToken = emit.elementwise(
        {op.getTargets(), max, logSum}, max,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> indices;
          for (unsigned dim = 0; dim + 1 < logitsType.getRank(); ++dim)
            indices.push_back(linalg::IndexOp::create(b, loc, dim));
          indices.push_back(
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]));
          Value target = tensor::ExtractOp::create(b, loc, logits, indices);
          Value normalizer = arith::AddFOp::create(b, loc, args[1], args[2]);
          return arith::SubFOp::create(b, loc, normalizer, target).getResult();
        });
    if (op.getReduction() == Reduction::none) {
      replaceWithCasts(rewriter, op, perToken);
      return success();
    }

    // Sum every token's loss into a rank-0 tensor; `mean` divides by the count.
    Value sum = emit.total(perToken, /*squares=*/false);
    Value result = sum;
    if (op.getReduction() == Reduction::mean) {
      Value countFloat = emit.countOf(
          tensor::getMixedSizes(rewriter, loc, perToken), elementType);
      result = emit.elementwise(
          {sum}, sum, [&](OpBuilder &b, Location loc, ValueRange args) {
            return arith::DivFOp::create(b, loc, args[0], countFloat)
                .getResult();
          });
    }
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

} // namespace

void mlir::recur::to_linalg::populateDenseOpPatterns(
    RewritePatternSet &patterns, bool activeRowProducts) {
  patterns
      .add<LowerEmbedding, LowerTranspose, LowerLogSoftmax, LowerCrossEntropy>(
          patterns.getContext());
  patterns.add<LowerLinear>(patterns.getContext(), activeRowProducts);
}
