//===- RecurToLinalg.cpp - recur ops to linalg/tensor/scf on tensors ------===//
//
// The unfused lowering: every recur op becomes upstream tensor-level IR that
// one-shot bufferization understands. The fusion passes work on recur ops
// before this runs; this file only has to be obviously right.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::recur {
#define GEN_PASS_DEF_CONVERTRECURTOLINALG
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

using utils::IteratorType;

/// Reductions may be reassociated so that LLVM vectorizes them.
arith::FastMathFlagsAttr reassociable(MLIRContext *context) {
  return arith::FastMathFlagsAttr::get(
      context, arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
}

/// Builds the tensor-level IR shared by the op lowerings.
class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc)
      : b(builder), loc(loc), fastMath(reassociable(builder.getContext())) {}

  Value constantFloat(Type type, double value) {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  }
  Value constantIndex(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// An uninitialized tensor with the given (static or SSA) sizes.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
    return tensor::EmptyOp::create(b, loc, sizes, elementType);
  }

  Value filled(ArrayRef<OpFoldResult> sizes, Type elementType, double value) {
    return linalg::FillOp::create(b, loc,
                                  ValueRange{constantFloat(elementType, value)},
                                  ValueRange{empty(sizes, elementType)})
        .getResult(0);
  }

  /// A tensor of `sizes` whose last dimension is `vector` (rank 1), repeated.
  Value broadcastLast(Value vector, ArrayRef<OpFoldResult> sizes) {
    Type elementType = cast<RankedTensorType>(vector.getType()).getElementType();
    unsigned rank = sizes.size();
    MLIRContext *context = b.getContext();
    AffineMap last = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
    Value init = empty(sizes, elementType);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{vector},
               ValueRange{init},
               ArrayRef<AffineMap>{last,
                                   AffineMap::getMultiDimIdentityMap(rank, context)},
               SmallVector<IteratorType>(rank, IteratorType::parallel),
               [](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nested, loc, args[0]);
               })
        .getResult(0);
  }

  /// `acc[d..., n] += sum_k x[d..., k] * w[n, k]`: x times w transposed, the
  /// PyTorch weight layout, accumulated into `acc`.
  Value accumulateMatmulTransposed(Value x, Value w, Value acc) {
    unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
    unsigned loops = rank + 1; // leading dims, n, k
    MLIRContext *context = b.getContext();
    SmallVector<AffineExpr> leading;
    for (unsigned dim = 0; dim + 1 < rank; ++dim)
      leading.push_back(b.getAffineDimExpr(dim));
    AffineExpr n = b.getAffineDimExpr(rank - 1), k = b.getAffineDimExpr(rank);
    auto withLast = [&](AffineExpr expr) {
      SmallVector<AffineExpr> exprs = leading;
      exprs.push_back(expr);
      return AffineMap::get(loops, 0, exprs, context);
    };
    SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{x, w},
               ValueRange{acc},
               ArrayRef<AffineMap>{withLast(k), AffineMap::get(loops, 0, {n, k}, context),
                                   withLast(n)},
               iterators,
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 Value product = arith::MulFOp::create(nested, loc, args[0],
                                                       args[1], fastMath);
                 Value sum = arith::AddFOp::create(nested, loc, args[2],
                                                   product, fastMath);
                 linalg::YieldOp::create(nested, loc, sum);
               })
        .getResult(0);
  }

  /// Reduces the last dimension of `input` into a tensor of its leading
  /// dimensions, starting from `init` and combining with
  /// `combine(acc, x, rowValues)`, where `rowValues` are the elements of
  /// `perRow` (tensors of the leading dimensions) for the current row.
  using Combine =
      function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange)>;
  Value reduceLast(Value input, ValueRange perRow, double init,
                   Combine combine) {
    auto type = cast<RankedTensorType>(input.getType());
    unsigned rank = type.getRank();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
    sizes.pop_back();
    Value acc = filled(sizes, type.getElementType(), init);
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    SmallVector<Value> inputs = {input};
    llvm::append_range(inputs, perRow);
    SmallVector<AffineMap> maps(inputs.size() + 1, leadingMap(rank));
    maps.front() = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
               iterators,
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(
                     nested, loc,
                     combine(nested, loc, args.back(), args.front(),
                             args.drop_front().drop_back()));
               })
        .getResult(0);
  }

  /// Row statistics for a softmax over the last dimension: the maximum and
  /// log(sum(exp(x - max))).
  std::pair<Value, Value> logSumExpParts(Value input) {
    Value max = reduceLast(
        input, {}, -std::numeric_limits<double>::infinity(),
        [](OpBuilder &nested, Location loc, Value acc, Value x, ValueRange) {
          return arith::MaximumFOp::create(nested, loc, acc, x).getResult();
        });
    Value sum = reduceLast(
        input, max, 0.0,
        [&](OpBuilder &nested, Location loc, Value acc, Value x,
            ValueRange rowMax) {
          Value shifted = arith::SubFOp::create(nested, loc, x, rowMax[0]);
          Value exp = math::ExpOp::create(nested, loc, shifted);
          return arith::AddFOp::create(nested, loc, acc, exp, fastMath)
              .getResult();
        });
    Value logSum = elementwise({sum}, sum, [](OpBuilder &nested, Location loc,
                                              ValueRange args) {
      return math::LogOp::create(nested, loc, args[0]).getResult();
    });
    return {max, logSum};
  }

  /// An elementwise map over tensors of the shape of `like`.
  Value elementwise(ValueRange inputs, Value like,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    auto type = cast<RankedTensorType>(like.getType());
    unsigned rank = type.getRank();
    Value init = empty(tensor::getMixedSizes(b, loc, like), type.getElementType());
    SmallVector<AffineMap> maps(
        inputs.size() + 1,
        AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
               SmallVector<IteratorType>(rank, IteratorType::parallel),
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nested, loc,
                                         body(nested, loc, args.drop_back()));
               })
        .getResult(0);
  }

  /// (d0, ..., d{rank-1}) -> (d0, ..., d{rank-2})
  AffineMap leadingMap(unsigned rank) {
    return AffineMap::getMultiDimIdentityMap(rank, b.getContext())
        .getMajorSubMap(rank - 1);
  }

  OpBuilder &b;
  Location loc;
  arith::FastMathFlagsAttr fastMath;
};

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = arith::ConstantOp::create(b, loc, x.getType(),
                                        b.getFloatAttr(x.getType(), 1.0));
  Value negated = arith::NegFOp::create(b, loc, x);
  Value denominator =
      arith::AddFOp::create(b, loc, one, math::ExpOp::create(b, loc, negated));
  return arith::DivFOp::create(b, loc, one, denominator);
}

/// Only f32 has a lowering so far; say so rather than produce slow or wrong
/// code for narrower types.
LogicalResult checkLowerable(Operation *op) {
  for (Type type : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    Type element = cast<ShapedType>(type).getElementType();
    if (isa<FloatType>(element) && !element.isF32())
      return op->emitOpError("has element type ")
             << element << "; only f32 models can be lowered so far";
  }
  return success();
}

/// Replaces `op` with `values`, casting where the lowering computed a less
/// static type than the op promised (e.g. after shape specialization).
void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, type] : llvm::zip(values, op->getResultTypes()))
    results.push_back(value.getType() == type
                          ? value
                          : tensor::CastOp::create(rewriter, op->getLoc(), type,
                                                   value)
                                .getResult());
  rewriter.replaceOp(op, results);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct LowerEmbedding : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Emitter emit(rewriter, op.getLoc());
    auto resultType = cast<RankedTensorType>(op.getType());
    unsigned rank = resultType.getRank();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, op.getLoc(), op.getIds());
    sizes.push_back(rewriter.getIndexAttr(resultType.getShape().back()));
    Value init = emit.empty(sizes, resultType.getElementType());
    Value table = op.getTable();
    // The runtime checks that ids lie in [0, vocab) before running.
    Value result =
        linalg::GenericOp::create(
            rewriter, op.getLoc(), TypeRange{init.getType()},
            ValueRange{op.getIds()}, ValueRange{init},
            ArrayRef<AffineMap>{
                emit.leadingMap(rank),
                AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
            SmallVector<IteratorType>(rank, IteratorType::parallel),
            [&](OpBuilder &nested, Location loc, ValueRange args) {
              Value row = arith::IndexCastOp::create(
                  nested, loc, nested.getIndexType(), args[0]);
              Value column = linalg::IndexOp::create(nested, loc, rank - 1);
              Value element = tensor::ExtractOp::create(nested, loc, table,
                                                        ValueRange{row, column});
              linalg::YieldOp::create(nested, loc, element);
            })
            .getResult(0);
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

struct LowerLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Emitter emit(rewriter, op.getLoc());
    auto resultType = cast<RankedTensorType>(op.getType());
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, op.getLoc(), op.getInput());
    sizes.back() = rewriter.getIndexAttr(resultType.getShape().back());
    Value init = op.getBias()
                     ? emit.broadcastLast(op.getBias(), sizes)
                     : emit.filled(sizes, resultType.getElementType(), 0.0);
    replaceWithCasts(rewriter, op,
                     emit.accumulateMatmulTransposed(op.getInput(),
                                                     op.getWeight(), init));
    return success();
  }
};

struct LowerLSTM : OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    Type elementType = inputType.getElementType();
    int64_t hidden = cast<RankedTensorType>(op.getWHh().getType()).getShape()[1];
    int64_t inputSize = inputType.getShape()[2];

    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    OpFoldResult seq = inputSizes[0], batch = inputSizes[1];
    SmallVector<OpFoldResult> stateSizes = {batch, rewriter.getIndexAttr(hidden)};
    SmallVector<OpFoldResult> gateSizes = {batch,
                                           rewriter.getIndexAttr(4 * hidden)};

    // Absent initial states are zero; both biases are folded into one vector.
    Value h0 = op.getH0() ? op.getH0() : emit.filled(stateSizes, elementType, 0.0);
    Value c0 = op.getC0() ? op.getC0() : emit.filled(stateSizes, elementType, 0.0);
    Value bias = emit.elementwise(
        {op.getBIh(), op.getBHh()}, op.getBIh(),
        [](OpBuilder &nested, Location loc, ValueRange args) {
          return arith::AddFOp::create(nested, loc, args[0], args[1]).getResult();
        });
    Value outputInit =
        emit.empty({seq, batch, rewriter.getIndexAttr(hidden)}, elementType);

    Value zero = emit.constantIndex(0), one = emit.constantIndex(1);
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, seq);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{h0, c0, outputInit},
        [&](OpBuilder &nested, Location loc, Value t, ValueRange state) {
          Emitter emit(nested, loc);
          Value h = state[0], c = state[1], output = state[2];
          OpFoldResult zeroAttr = nested.getIndexAttr(0);
          OpFoldResult oneAttr = nested.getIndexAttr(1);
          auto stepType = RankedTensorType::get(
              {inputType.getShape()[1], inputSize}, elementType);
          Value x = tensor::ExtractSliceOp::create(
              nested, loc, stepType, op.getInput(),
              ArrayRef<OpFoldResult>{t, zeroAttr, zeroAttr},
              ArrayRef<OpFoldResult>{oneAttr, batch, nested.getIndexAttr(inputSize)},
              ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
          Value gates = emit.broadcastLast(bias, gateSizes);
          gates = emit.accumulateMatmulTransposed(x, op.getWIh(), gates);
          gates = emit.accumulateMatmulTransposed(h, op.getWHh(), gates);

          // Gate order i, f, g, o along the 4H dimension, as in PyTorch.
          SmallVector<Value> gate;
          auto stateType = cast<RankedTensorType>(h.getType());
          for (int64_t index = 0; index < 4; ++index)
            gate.push_back(tensor::ExtractSliceOp::create(
                nested, loc, stateType, gates,
                ArrayRef<OpFoldResult>{zeroAttr,
                                       nested.getIndexAttr(index * hidden)},
                stateSizes, ArrayRef<OpFoldResult>{oneAttr, oneAttr}));
          SmallVector<AffineMap> maps(
              7, AffineMap::getMultiDimIdentityMap(2, nested.getContext()));
          auto cell = linalg::GenericOp::create(
              nested, loc, TypeRange{stateType, stateType},
              ValueRange{gate[0], gate[1], gate[2], gate[3], c},
              // Updating h and c in place: h was last read by the recurrent
              // matmul above, c is read elementwise.
              ValueRange{h, c},
              maps, SmallVector<IteratorType>(2, IteratorType::parallel),
              [](OpBuilder &b, Location loc, ValueRange args) {
                Value in = sigmoid(b, loc, args[0]);
                Value forget = sigmoid(b, loc, args[1]);
                Value candidate = math::TanhOp::create(b, loc, args[2]);
                Value out = sigmoid(b, loc, args[3]);
                Value cNext = arith::AddFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, forget, args[4]),
                    arith::MulFOp::create(b, loc, in, candidate));
                Value hNext = arith::MulFOp::create(
                    b, loc, out, math::TanhOp::create(b, loc, cNext));
                linalg::YieldOp::create(b, loc, ValueRange{hNext, cNext});
              });
          Value hNext = cell.getResult(0), cNext = cell.getResult(1);
          Value outputNext = tensor::InsertSliceOp::create(
              nested, loc, hNext, output,
              ArrayRef<OpFoldResult>{t, zeroAttr, zeroAttr},
              ArrayRef<OpFoldResult>{oneAttr, batch, nested.getIndexAttr(hidden)},
              ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
          scf::YieldOp::create(nested, loc, ValueRange{hNext, cNext, outputNext});
        });

    replaceWithCasts(rewriter, op,
                     {loop.getResult(2), loop.getResult(0), loop.getResult(1)});
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
                  b, loc, arith::SubFOp::create(b, loc, shifted, args[2]).getResult());
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
    unsigned rank = logitsType.getRank() - 1;
    Value sumInit = emit.filled({}, elementType, 0.0);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{sumInit.getType()}, ValueRange{perToken},
            ValueRange{sumInit},
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext()),
                AffineMap::get(rank, 0, {}, rewriter.getContext())},
            SmallVector<IteratorType>(rank, IteratorType::reduction),
            [&](OpBuilder &b, Location loc, ValueRange args) {
              linalg::YieldOp::create(
                  b, loc,
                  arith::AddFOp::create(b, loc, args[1], args[0], emit.fastMath)
                      .getResult());
            })
            .getResult(0);
    Value result = sum;
    if (op.getReduction() == Reduction::mean) {
      Value count = emit.constantIndex(1);
      for (OpFoldResult size : tensor::getMixedSizes(rewriter, loc, perToken))
        count = arith::MulIOp::create(
            rewriter, loc, count,
            getValueOrCreateConstantIndexOp(rewriter, loc, size));
      Value countInt = arith::IndexCastOp::create(rewriter, loc,
                                                  rewriter.getI64Type(), count);
      Value countFloat =
          arith::SIToFPOp::create(rewriter, loc, elementType, countInt);
      result = emit.elementwise(
          {sum}, sum, [&](OpBuilder &b, Location loc, ValueRange args) {
            return arith::DivFOp::create(b, loc, args[0], countFloat).getResult();
          });
    }
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

struct ConvertRecurToLinalgPass
    : mlir::recur::impl::ConvertRecurToLinalgBase<ConvertRecurToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerEmbedding, LowerLinear, LowerLSTM, LowerLogSoftmax,
                 LowerCrossEntropy>(context);
    // Diagnose every op that cannot be lowered before changing anything.
    bool lowerable = true;
    getOperation().walk([&](Operation *op) {
      if (isa<RecurDialect>(op->getDialect()))
        lowerable &= succeeded(checkLowerable(op));
    });
    if (!lowerable) {
      signalPassFailure();
      return;
    }
    ConversionTarget target(*context);
    target.addIllegalDialect<RecurDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns)))) {
      signalPassFailure();
      return;
    }
    // Model inputs and weights belong to the caller: bufferization must copy
    // rather than update them in place.
    getOperation().walk([](func::FuncOp function) {
      for (unsigned index = 0; index < function.getNumArguments(); ++index)
        if (function.getArgAttr(index, RecurDialect::kInputAttrName) ||
            function.getArgAttr(index, RecurDialect::kWeightAttrName))
          function.setArgAttr(
              index, bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(function.getContext(), false));
    });
  }
};

} // namespace
