//===- RecurToLinalg.cpp - recur ops to linalg/tensor/scf on tensors ------===//
//
// The unfused lowering: every recur op becomes upstream tensor-level IR that
// one-shot bufferization understands. The fusion passes work on recur ops
// before this runs; this file only has to be obviously right.
//
//===----------------------------------------------------------------------===//

#include "recur/Conversion/PackPanels.h"
#include "recur/Conversion/Passes.h"
#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/StringSet.h"

#include <limits>

namespace mlir::recur {
#define GEN_PASS_DEF_CONVERTRECURTOLINALG
#include "recur/Conversion/Passes.h.inc"
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
    Type elementType =
        cast<RankedTensorType>(vector.getType()).getElementType();
    unsigned rank = sizes.size();
    MLIRContext *context = b.getContext();
    AffineMap last = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
    Value init = empty(sizes, elementType);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{vector},
               ValueRange{init},
               ArrayRef<AffineMap>{
                   last, AffineMap::getMultiDimIdentityMap(rank, context)},
               SmallVector<IteratorType>(rank, IteratorType::parallel),
               [](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nested, loc, args[0]);
               })
        .getResult(0);
  }

  /// `x` as the input of a product with `w`: rounded to bf16 (to nearest
  /// even) where `w` is packed in pairs of k for bf16 products, else `x`.
  /// The products' callers round first, so that what sets the accumulator
  /// stays right before the product (the CPU kernels start from it).
  Value productInput(Value x, Value w) {
    if (!isPairPacked(w.getType(), x.getType()))
      return x;
    // A bf16 model's own input, extended to f32 at the entry, is its own
    // rounding.
    if (auto extension = x.getDefiningOp<arith::ExtFOp>();
        extension && getElementTypeOrSelf(extension.getIn()).isBF16())
      return extension.getIn();
    Value init = empty(tensor::getMixedSizes(b, loc, x), b.getBF16Type());
    return elementwiseInto(
        x, init, [&](OpBuilder &nested, Location loc, ValueRange args) {
          return arith::TruncFOp::create(nested, loc, nested.getBF16Type(),
                                         args[0])
              .getResult();
        });
  }

  /// `acc[d..., n] += sum_k x[d..., k] * w[n, k]`: x times w transposed, the
  /// PyTorch weight layout, accumulated into `acc`. A rank-3 `w` is that
  /// weight packed by recur.pack_panels: w[n floordiv t, k, n mod t]; a
  /// rank-4 bf16 one in pairs of k, w[n floordiv t, k floordiv 2, n mod t,
  /// k mod 2], whose products are of bf16 operands (x rounded by
  /// productInput) with f32 sums.
  Value accumulateMatmulTransposed(Value x, Value w, Value acc) {
    bool pairs = isPairPacked(w.getType(), acc.getType());
    if (pairs)
      x = productInput(x, w);
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
    auto weightType = cast<RankedTensorType>(w.getType());
    AffineMap weightMap = AffineMap::get(loops, 0, {n, k}, context);
    if (pairs) {
      int64_t tile = weightType.getDimSize(2);
      weightMap = AffineMap::get(
          loops, 0, {n.floorDiv(tile), k.floorDiv(2), n % tile, k % 2},
          context);
    } else if (weightType.getRank() == 3) {
      int64_t tile = weightType.getDimSize(2);
      weightMap =
          AffineMap::get(loops, 0, {n.floorDiv(tile), k, n % tile}, context);
    }
    SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    return multiplyAccumulate({x, w}, acc,
                              {withLast(k), weightMap, withLast(n)}, iterators);
  }

  /// `acc[d..., k] += sum_n x[d..., n] * w[n, k]`: x times w (not
  /// transposed), the input gradient of a product with a PyTorch weight.
  Value accumulateMatmul(Value x, Value w, Value acc) {
    unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
    unsigned loops = rank + 1; // leading dims, k, n
    MLIRContext *context = b.getContext();
    SmallVector<AffineExpr> leading;
    for (unsigned dim = 0; dim + 1 < rank; ++dim)
      leading.push_back(b.getAffineDimExpr(dim));
    AffineExpr k = b.getAffineDimExpr(rank - 1), n = b.getAffineDimExpr(rank);
    auto withLast = [&](AffineExpr expr) {
      SmallVector<AffineExpr> exprs = leading;
      exprs.push_back(expr);
      return AffineMap::get(loops, 0, exprs, context);
    };
    SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    return multiplyAccumulate(
        {x, w}, acc,
        {withLast(n), AffineMap::get(loops, 0, {n, k}, context), withLast(k)},
        iterators);
  }

  /// `acc[n, k] += sum over d... of a[d..., n] * x[d..., k]`: a weight's
  /// gradient, one contraction over the rows of every step at once.
  Value accumulateRowProducts(Value a, Value x, Value acc) {
    unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
    unsigned loops = rank + 1; // n, k, leading dims
    MLIRContext *context = b.getContext();
    SmallVector<AffineExpr> leading;
    for (unsigned dim = 0; dim + 1 < rank; ++dim)
      leading.push_back(b.getAffineDimExpr(dim + 2));
    auto withLast = [&](unsigned dim) {
      SmallVector<AffineExpr> exprs = leading;
      exprs.push_back(b.getAffineDimExpr(dim));
      return AffineMap::get(loops, 0, exprs, context);
    };
    SmallVector<IteratorType> iterators(loops, IteratorType::reduction);
    iterators[0] = iterators[1] = IteratorType::parallel;
    return multiplyAccumulate(
        {a, x}, acc,
        {withLast(0), withLast(1),
         AffineMap::getMultiDimIdentityMap(loops, context).getMajorSubMap(2)},
        iterators);
  }

  /// `acc[n] += sum over d... of a[d..., n]`.
  Value accumulateColumnSums(Value a, Value acc) {
    unsigned rank = cast<RankedTensorType>(a.getType()).getRank();
    MLIRContext *context = b.getContext();
    SmallVector<AffineExpr> exprs;
    for (unsigned dim = 1; dim < rank; ++dim)
      exprs.push_back(b.getAffineDimExpr(dim));
    exprs.push_back(b.getAffineDimExpr(0));
    SmallVector<IteratorType> iterators(rank, IteratorType::reduction);
    iterators[0] = IteratorType::parallel;
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{a}, ValueRange{acc},
               ArrayRef<AffineMap>{
                   AffineMap::get(rank, 0, exprs, context),
                   AffineMap::get(rank, 0, b.getAffineDimExpr(0))},
               iterators,
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nested, loc,
                                         arith::AddFOp::create(nested, loc,
                                                               args[1], args[0],
                                                               fastMath)
                                             .getResult());
               })
        .getResult(0);
  }

  /// The sum of the squares of every element of `a`, as a rank-0 tensor.
  Value sumOfSquares(Value a) { return total(a, /*squares=*/true); }

  /// Σ a (or Σ a², `squares`) into a rank-0 tensor. With two or more
  /// dimensions, the rows' sums first and then theirs: the rows run in
  /// parallel (threads on the GPU, threads and vectors on the CPU) rather
  /// than every element in one loop (one GPU thread).
  Value total(Value a, bool squares) {
    auto type = cast<RankedTensorType>(a.getType());
    unsigned rank = type.getRank();
    auto term = [squares](OpBuilder &nested, Location loc, Value x) {
      return squares ? arith::MulFOp::create(nested, loc, x, x).getResult() : x;
    };
    if (rank >= 2) {
      Value rowSums = reduceLast(
          a, {}, 0.0,
          [&](OpBuilder &nested, Location loc, Value acc, Value x, ValueRange) {
            return arith::AddFOp::create(nested, loc, acc, term(nested, loc, x),
                                         fastMath)
                .getResult();
          });
      return total(rowSums, /*squares=*/false);
    }
    MLIRContext *context = b.getContext();
    Value init = filled({}, type.getElementType(), 0.0);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{a},
               ValueRange{init},
               ArrayRef<AffineMap>{
                   AffineMap::getMultiDimIdentityMap(rank, context),
                   AffineMap::get(rank, 0, {}, context)},
               SmallVector<IteratorType>(rank, IteratorType::reduction),
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(
                     nested, loc,
                     arith::AddFOp::create(nested, loc, args[1],
                                           term(nested, loc, args[0]), fastMath)
                         .getResult());
               })
        .getResult(0);
  }

  /// `acc += inputs[0] * inputs[1]` over the iteration space of `maps`
  /// (inputs', then acc's).
  Value multiplyAccumulate(ValueRange inputs, Value acc,
                           ArrayRef<AffineMap> maps,
                           ArrayRef<IteratorType> iterators) {
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
               iterators,
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 // bf16 operands (bf16 products) are exact in f32.
                 auto extended = [&](Value value) {
                   return value.getType() == args[2].getType()
                              ? value
                              : arith::ExtFOp::create(nested, loc,
                                                      args[2].getType(), value)
                                    .getResult();
                 };
                 Value product = arith::MulFOp::create(
                     nested, loc, extended(args[0]), extended(args[1]),
                     fastMath);
                 Value sum = arith::AddFOp::create(nested, loc, args[2],
                                                   product, fastMath);
                 linalg::YieldOp::create(nested, loc, sum);
               })
        .getResult(0);
  }

  /// The product of `sizes` as a float of `type`.
  Value countOf(ArrayRef<OpFoldResult> sizes, Type type) {
    Value count = constantIndex(1);
    for (OpFoldResult size : sizes)
      count = arith::MulIOp::create(
          b, loc, count, getValueOrCreateConstantIndexOp(b, loc, size));
    Value countInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
    return arith::SIToFPOp::create(b, loc, type, countInt);
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
    Value logSum = elementwise(
        {sum}, sum, [](OpBuilder &nested, Location loc, ValueRange args) {
          return math::LogOp::create(nested, loc, args[0]).getResult();
        });
    return {max, logSum};
  }

  /// An elementwise map over tensors of the shape of `like`.
  Value
  elementwise(ValueRange inputs, Value like,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    auto type = cast<RankedTensorType>(like.getType());
    Value init =
        empty(tensor::getMixedSizes(b, loc, like), type.getElementType());
    return elementwiseInto(
        inputs, init, [&](OpBuilder &nested, Location loc, ValueRange args) {
          return body(nested, loc, args.drop_back());
        });
  }

  /// An elementwise map written into `target`, whose element the body
  /// receives after the inputs' (a weight updated in place, a sum
  /// accumulated into a row, the next slice of a scan). A rank-0 input is
  /// broadcast: a scalar that stays in a tensor (on the device, for CUDA).
  Value
  elementwiseInto(ValueRange inputs, Value target,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    unsigned rank = cast<RankedTensorType>(target.getType()).getRank();
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, b.getContext());
    SmallVector<AffineMap> maps;
    for (Value input : inputs)
      maps.push_back(cast<RankedTensorType>(input.getType()).getRank() == 0
                         ? AffineMap::get(rank, 0, {}, b.getContext())
                         : identity);
    maps.push_back(identity);
    return linalg::GenericOp::create(
               b, loc, TypeRange{target.getType()}, inputs, ValueRange{target},
               maps, SmallVector<IteratorType>(rank, IteratorType::parallel),
               [&](OpBuilder &nested, Location loc, ValueRange args) {
                 linalg::YieldOp::create(nested, loc, body(nested, loc, args));
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
/// code for narrower types. Layout ops (packing, gate interleaving) move
/// elements of any type, and a weight packed in bf16 pairs of k is what an
/// f32 op's bf16 products read.
LogicalResult checkLowerable(Operation *op) {
  if (isa<PackPanelsOp, InterleaveGatesOp>(op))
    return success();
  Type computeType =
      op->getNumResults() ? op->getResult(0).getType() : Type();
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    if (computeType && isPairPacked(type, computeType))
      continue;
    Type element = cast<ShapedType>(type).getElementType();
    if (isa<FloatType>(element) && !element.isF32())
      return op->emitOpError("has element type ")
             << element
             << "; the lowering computes in f32 (recur-compute-in-f32 "
                "converts bf16 and f16 models)";
  }
  return success();
}

/// Replaces `op` with `values`, casting where the lowering computed a less
/// static type than the op promised (e.g. after shape specialization).
void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, type] : llvm::zip(values, op->getResultTypes()))
    results.push_back(
        value.getType() == type
            ? value
            : tensor::CastOp::create(rewriter, op->getLoc(), type, value)
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
              Value element = tensor::ExtractOp::create(
                  nested, loc, table, ValueRange{row, column});
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
    Value input = emit.productInput(op.getInput(), op.getWeight());
    Value init = op.getBias()
                     ? emit.broadcastLast(op.getBias(), sizes)
                     : emit.filled(sizes, resultType.getElementType(), 0.0);
    replaceWithCasts(rewriter, op,
                     emit.accumulateMatmulTransposed(input, op.getWeight(),
                                                     init));
    return success();
  }
};

/// The cell update of PyTorch's LSTM from the four gate pre-activations
/// (i, f, g, o) and the previous cell state: returns {h_t, c_t}.
std::pair<Value, Value> lstmCell(OpBuilder &b, Location loc, Value inGate,
                                 Value forgetGate, Value candidateGate,
                                 Value outGate, Value cPrev) {
  Value in = sigmoid(b, loc, inGate);
  Value forget = sigmoid(b, loc, forgetGate);
  Value candidate = math::TanhOp::create(b, loc, candidateGate);
  Value out = sigmoid(b, loc, outGate);
  Value cNext = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, forget, cPrev),
      arith::MulFOp::create(b, loc, in, candidate));
  Value hNext =
      arith::MulFOp::create(b, loc, out, math::TanhOp::create(b, loc, cNext));
  return {hNext, cNext};
}

/// `y` with row `t` set to `h` ([B, H]).
Value insertStep(OpBuilder &b, Location loc, Value h, Value y, Value t,
                 OpFoldResult batch, int64_t hidden) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(
      b, loc, h, y, ArrayRef<OpFoldResult>{t, zero, zero},
      ArrayRef<OpFoldResult>{one, batch, b.getIndexAttr(hidden)},
      ArrayRef<OpFoldResult>{one, one, one});
}

/// `initial` ([B, H]), or zero where the op has no initial state.
Value initialState(Emitter &emit, Value initial, OpFoldResult batch,
                   int64_t hidden, Type elementType) {
  if (initial)
    return initial;
  return emit.filled({batch, emit.b.getIndexAttr(hidden)}, elementType, 0.0);
}

/// The time step that iteration `iteration` of a loop over `steps` steps
/// computes: the iteration itself, or `steps - 1 - iteration` when the layer
/// runs in reverse.
Value stepTime(OpBuilder &b, Location loc, Value iteration, Value steps,
               bool reverse) {
  if (!reverse)
    return iteration;
  Value last = arith::SubIOp::create(b, loc, steps,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  return arith::SubIOp::create(b, loc, last, iteration);
}

/// The time loop shared by the LSTM forms: an scf.for over T (never
/// unrolled) carrying h, c, the output sequence [T, B, H] ([T, B, P] and h
/// [B, P] when the layer is `projected` to P) and `scratch`
/// (tensors a step reuses; each must be yielded in place, so that no buffer
/// is allocated per step). `step` gets the step's time (T-1 down to 0 with
/// `reverse`) and {h_{t-1}, c_{t-1}, scratch...} and returns {h_t, c_t,
/// scratch...}. Returns {y, h_T, c_T}.
using StepFn = function_ref<SmallVector<Value>(OpBuilder &, Location, Value t,
                                               ValueRange state)>;
SmallVector<Value> emitTimeLoop(OpBuilder &b, Location loc, OpFoldResult seq,
                                OpFoldResult batch, int64_t hidden,
                                Type elementType, Value h0, Value c0,
                                ValueRange scratch, bool reverse, StepFn step,
                                std::optional<int64_t> projected = {}) {
  Emitter emit(b, loc);
  // h and y have the projection's size, if any; c has H.
  int64_t outputSize = projected.value_or(hidden);
  h0 = initialState(emit, h0, batch, outputSize, elementType);
  c0 = initialState(emit, c0, batch, hidden, elementType);
  Value outputInit =
      emit.empty({seq, batch, b.getIndexAttr(outputSize)}, elementType);
  SmallVector<Value> inits = {outputInit, h0, c0};
  llvm::append_range(inits, scratch);
  Value zero = emit.constantIndex(0), one = emit.constantIndex(1);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seq);
  auto loop = scf::ForOp::create(
      b, loc, zero, steps, one, inits,
      [&](OpBuilder &nested, Location loc, Value iteration, ValueRange state) {
        Value t = stepTime(nested, loc, iteration, steps, reverse);
        SmallVector<Value> next = step(nested, loc, t, state.drop_front());
        next.insert(next.begin(), insertStep(nested, loc, next[0], state[0], t,
                                             batch, outputSize));
        scf::YieldOp::create(nested, loc, next);
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// Row `t` of a [T, B, N] tensor as a [B, N] tensor (columns [offset,
/// offset + width) of it).
Value timeSlice(OpBuilder &b, Location loc, Value sequence, Value t,
                OpFoldResult batch, int64_t offset, int64_t width) {
  auto type = cast<RankedTensorType>(sequence.getType());
  auto sliceType =
      RankedTensorType::get({type.getShape()[1], width}, type.getElementType());
  OpFoldResult oneAttr = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, sliceType, sequence,
      ArrayRef<OpFoldResult>{t, b.getIndexAttr(0), b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{oneAttr, batch, b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
}

/// The separate step schedule: the [B, 4H] gate tensor `gates` (which
/// already holds everything but h·w_hhᵀ) gets the recurrent contraction,
/// then one elementwise pass applies the cell.
SmallVector<Value> separateStep(OpBuilder &b, Location loc, Value gates,
                                Value wHh, Value h, Value c, OpFoldResult batch,
                                int64_t hidden, Value hOut = {}) {
  Emitter emit(b, loc);
  gates = emit.accumulateMatmulTransposed(h, wHh, gates);
  // The cell's h goes to `hOut` where h itself is projected from it.
  if (!hOut)
    hOut = h;
  // Gate order i, f, g, o along the 4H dimension, as in PyTorch.
  SmallVector<Value> gate;
  auto stateType = cast<RankedTensorType>(c.getType());
  OpFoldResult zeroAttr = b.getIndexAttr(0), oneAttr = b.getIndexAttr(1);
  SmallVector<OpFoldResult> stateSizes = {batch, b.getIndexAttr(hidden)};
  for (int64_t index = 0; index < 4; ++index)
    gate.push_back(tensor::ExtractSliceOp::create(
        b, loc, stateType, gates,
        ArrayRef<OpFoldResult>{zeroAttr, b.getIndexAttr(index * hidden)},
        stateSizes, ArrayRef<OpFoldResult>{oneAttr, oneAttr}));
  SmallVector<AffineMap> maps(
      7, AffineMap::getMultiDimIdentityMap(2, b.getContext()));
  auto cell = linalg::GenericOp::create(
      b, loc, TypeRange{stateType, stateType},
      ValueRange{gate[0], gate[1], gate[2], gate[3], c},
      // Updating h and c in place: h was last read by the recurrent
      // matmul above, c is read elementwise.
      ValueRange{hOut, c}, maps,
      SmallVector<IteratorType>(2, IteratorType::parallel),
      [](OpBuilder &b, Location loc, ValueRange args) {
        auto [hNext, cNext] =
            lstmCell(b, loc, args[0], args[1], args[2], args[3], args[4]);
        linalg::YieldOp::create(b, loc, ValueRange{hNext, cNext});
      });
  return {cell.getResult(0), cell.getResult(1)};
}

/// The [B, H] buffer a projected step's cell writes its unprojected h into,
/// carried by the time loop as scratch (projectedStep).
Value projectedStepScratch(Emitter &emit, OpFoldResult batch, int64_t hidden,
                           Type elementType) {
  return emit.empty({batch, emit.b.getIndexAttr(hidden)}, elementType);
}

/// The separate step of a projected layer (proj_size): `state` is {h_{t-1}
/// [B, P], c_{t-1} [B, H], the [B, H] scratch}; the cell writes its h into
/// the scratch, and h_t = that · w_hrᵀ goes into h_{t-1}'s buffer (read
/// before by the recurrent GEMM). Returns {h_t, c_t, scratch}.
SmallVector<Value> projectedStep(OpBuilder &b, Location loc, Value gates,
                                 Value wHh, Value wHr, ValueRange state,
                                 OpFoldResult batch, int64_t hidden) {
  Emitter emit(b, loc);
  SmallVector<Value> cell = separateStep(b, loc, gates, wHh, state[0], state[1],
                                         batch, hidden, /*hOut=*/state[2]);
  Type elementType =
      cast<RankedTensorType>(state[0].getType()).getElementType();
  Value zero = linalg::FillOp::create(
                   b, loc, ValueRange{emit.constantFloat(elementType, 0.0)},
                   ValueRange{state[0]})
                   .getResult(0);
  Value h = emit.accumulateMatmulTransposed(cell[0], wHr, zero);
  return {h, cell[1], cell[0]};
}

/// The rows of unit `unit`'s four gates (i, f, g, o) in a gate-stacked
/// weight: g * H + j in PyTorch's layout; interleaved with tile K,
/// (j / K) * 4K + g * K + j % K, i.e. j + 3K * (j / K) + g * K.
SmallVector<Value> gateRows(OpBuilder &b, Location loc, Value unit,
                            int64_t hidden, std::optional<int64_t> gateTile) {
  Value first = unit;
  int64_t gateStride = hidden;
  if (gateTile) {
    int64_t tile = *gateTile;
    gateStride = tile;
    Value tiles = arith::DivUIOp::create(
        b, loc, unit, arith::ConstantIndexOp::create(b, loc, tile));
    first = arith::AddIOp::create(
        b, loc, unit,
        arith::MulIOp::create(
            b, loc, tiles, arith::ConstantIndexOp::create(b, loc, 3 * tile)));
  }
  SmallVector<Value> rows = {first};
  for (int64_t gate = 1; gate < 4; ++gate)
    rows.push_back(arith::AddIOp::create(
        b, loc, first,
        arith::ConstantIndexOp::create(b, loc, gate * gateStride)));
  return rows;
}

/// Marks `step` as a fused step (kUnitStepAttrName) over iterations
/// (batch row, unit[, layer]).
void markUnitStep(OpBuilder &b, linalg::GenericOp step, bool layered,
                  ArrayRef<int64_t> hidden, ArrayRef<int64_t> gateTiles) {
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("batch", b.getI64IntegerAttr(0)),
      b.getNamedAttr("unit", b.getI64IntegerAttr(1)),
      b.getNamedAttr("hidden", b.getDenseI64ArrayAttr(hidden)),
      b.getNamedAttr("gate_tiles", b.getDenseI64ArrayAttr(gateTiles))};
  if (layered)
    fields.push_back(b.getNamedAttr("layer", b.getI64IntegerAttr(2)));
  step->setAttr(kUnitStepAttrName, b.getDictionaryAttr(fields));
}

/// A product added to a unit's gate sums: for every gate g,
/// Σ_k x[leading..., k] · w[rows[g], k] over w's columns k.
struct GateProduct {
  Value x;
  SmallVector<Value, 2> leading;
  Value w;
};

/// `sums` (the four gates of one unit) plus `product`, summed over k in
/// registers.
SmallVector<Value> accumulateGates(OpBuilder &b, Location loc, ValueRange sums,
                                   ArrayRef<Value> rows,
                                   const GateProduct &product) {
  arith::FastMathFlagsAttr fastMath = reassociable(b.getContext());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = arith::ConstantIndexOp::create(
      b, loc, cast<RankedTensorType>(product.w.getType()).getShape()[1]);
  auto loop = scf::ForOp::create(
      b, loc, zero, size, one, sums,
      [&](OpBuilder &kb, Location loc, Value k, ValueRange acc) {
        SmallVector<Value> indices(product.leading.begin(),
                                   product.leading.end());
        indices.push_back(k);
        Value xk = tensor::ExtractOp::create(kb, loc, product.x, indices);
        SmallVector<Value> next;
        for (int64_t gate = 0; gate < 4; ++gate) {
          Value weight = tensor::ExtractOp::create(kb, loc, product.w,
                                                   ValueRange{rows[gate], k});
          Value term = arith::MulFOp::create(kb, loc, xk, weight, fastMath);
          next.push_back(
              arith::AddFOp::create(kb, loc, acc[gate], term, fastMath));
        }
        scf::YieldOp::create(kb, loc, next);
      });
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// The fused step schedule: one parallel loop nest over (batch row b,
/// hidden unit j) whose body sums the four gates of unit j over k in
/// registers, starting from the precomputed input gates of step t, and
/// applies the cell at once. The [B, 4H] gate tensor never exists. Every
/// unit reads all of h_{t-1} while h_t is written in place, so h_{t-1} is
/// first copied to `hPrev`, a [B, H] buffer the loop reuses; c is updated in
/// place.
SmallVector<Value> fusedStep(OpBuilder &b, Location loc, Value inputGates,
                             Value t, Value wHh,
                             std::optional<int64_t> gateTile, Value h, Value c,
                             Value hPrev, OpFoldResult batch, int64_t hidden) {
  auto stateType = cast<RankedTensorType>(c.getType());
  hPrev = linalg::CopyOp::create(b, loc, h, hPrev).getResult(0);
  SmallVector<Value> gateInputs;
  for (int64_t gate = 0; gate < 4; ++gate)
    gateInputs.push_back(
        timeSlice(b, loc, inputGates, t, batch, gate * hidden, hidden));
  SmallVector<AffineMap> maps(
      6, AffineMap::getMultiDimIdentityMap(2, b.getContext()));
  // c_{t-1} is read through the output it is updated in.
  auto cell = linalg::GenericOp::create(
      b, loc, TypeRange{stateType, stateType}, gateInputs, ValueRange{h, c},
      maps, SmallVector<IteratorType>(2, IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value row = linalg::IndexOp::create(nb, loc, 0);
        Value unit = linalg::IndexOp::create(nb, loc, 1);
        SmallVector<Value> rows = gateRows(nb, loc, unit, hidden, gateTile);
        SmallVector<Value> sums = accumulateGates(nb, loc, args.take_front(4),
                                                  rows, {hPrev, {row}, wHh});
        auto [hNext, cNext] =
            lstmCell(nb, loc, sums[0], sums[1], sums[2], sums[3], args[5]);
        linalg::YieldOp::create(nb, loc, ValueRange{hNext, cNext});
      });
  markUnitStep(b, cell, /*layered=*/false, {hidden}, {gateTile.value_or(0)});
  return {cell.getResult(0), cell.getResult(1), hPrev};
}

/// [d..., N] as [d..., parts...] (a view; N = the parts' product).
Value splitLast(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> parts) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape().drop_back());
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < type.getRank() - 1; ++dim)
    groups.push_back({dim});
  groups.emplace_back();
  for (int64_t part : parts) {
    groups.back().push_back(shape.size());
    shape.push_back(part);
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
}

/// The inverse of splitLast: the last `parts` dimensions as one.
Value joinLast(OpBuilder &b, Location loc, Value value, int64_t parts) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < rank - parts; ++dim)
    groups.push_back({dim});
  groups.emplace_back();
  for (int64_t dim = rank - parts; dim < rank; ++dim)
    groups.back().push_back(dim);
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}

/// The fused step on a w_hh packed for the CPU's register tile: panels of
/// 4K rows, each the four gates of K units ([H / K, H, 4K], w_hh interleaved
/// with tile K). `gates` ([B, 4H], reused every step) gets the step's input
/// gates in w_hh's interleaved order, then the packed contraction adds
/// h_{t-1} · w_hhᵀ, then the cell reads gate g of unit qK + l at
/// gates[b, q, g, l] and writes h_t into `hOut` (h_{t-1} stays readable in
/// `hIn` until the step ends) and c_t in place.
/// recur-vectorize-packed-matmuls makes the three one loop nest: a register
/// tile per (rows, K units) whose K loop starts from the input gates and
/// whose accumulators go through the cell.
SmallVector<Value> fusedPackedStep(OpBuilder &b, Location loc, Value inputGates,
                                   Value t, Value wHh, int64_t gateTile,
                                   Value hIn, Value hOut, Value c, Value gates,
                                   OpFoldResult batch, int64_t hidden) {
  int64_t units = hidden / gateTile;
  Value input = Emitter(b, loc).productInput(hIn, wHh);
  Value stepGates =
      timeSlice(b, loc, inputGates, t, batch, 0, 4 * hidden); // [B, 4H]
  Value interleaved =
      linalg::TransposeOp::create(
          b, loc, splitLast(b, loc, stepGates, {4, units, gateTile}),
          splitLast(b, loc, gates, {units, 4, gateTile}),
          ArrayRef<int64_t>{0, 2, 1, 3})
          .getResult()[0];
  gates = Emitter(b, loc).accumulateMatmulTransposed(
      input, wHh, joinLast(b, loc, interleaved, 3));
  Value gateTiles = splitLast(b, loc, gates, {units, 4, gateTile});
  MLIRContext *context = b.getContext();
  AffineExpr row = b.getAffineDimExpr(0), unitTile = b.getAffineDimExpr(1),
             lane = b.getAffineDimExpr(2);
  SmallVector<AffineMap> maps;
  for (int64_t gate = 0; gate < 4; ++gate)
    maps.push_back(AffineMap::get(
        3, 0, {row, unitTile, b.getAffineConstantExpr(gate), lane}, context));
  maps.append(2, AffineMap::getMultiDimIdentityMap(3, context));
  Value hTiles = splitLast(b, loc, hOut, {units, gateTile});
  Value cTiles = splitLast(b, loc, c, {units, gateTile});
  // c_{t-1} is read through the output it is updated in.
  auto cell = linalg::GenericOp::create(
      b, loc, TypeRange{hTiles.getType(), cTiles.getType()},
      ValueRange(SmallVector<Value>(4, gateTiles)), ValueRange{hTiles, cTiles},
      maps, SmallVector<IteratorType>(3, IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        auto [hNext, cNext] =
            lstmCell(nb, loc, args[0], args[1], args[2], args[3], args[5]);
        linalg::YieldOp::create(nb, loc, ValueRange{hNext, cNext});
      });
  return {joinLast(b, loc, cell.getResult(0), 2),
          joinLast(b, loc, cell.getResult(1), 2), gates};
}

/// One step of a double-buffered loop: step t reads hIn and writes every
/// element of hOut; returns {h_t, the other carried values' next values}.
using DoubleBufferedStepFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value t, Value hIn, Value hOut, ValueRange carried)>;

/// `count` steps with h double-buffered, two per iteration: the first from
/// h into `hOther`, the second back into h, so that the loop-carried buffers
/// stay in place for bufferization and no step copies h before it starts
/// (an odd count's last step is followed by that copy instead). Returns
/// {h, the carried values}.
SmallVector<Value> emitDoubleBufferedLoop(OpBuilder &b, Location loc,
                                          Value count, Value h0, Value hOther,
                                          ValueRange carried,
                                          DoubleBufferedStepFn step) {
  SmallVector<Value> inits = {h0, hOther};
  llvm::append_range(inits, carried);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0), count,
      arith::ConstantIndexOp::create(b, loc, 2), inits,
      [&](OpBuilder &nb, Location loc, Value t, ValueRange state) {
        Value h = state[0], other = state[1];
        SmallVector<Value> first =
            step(nb, loc, t, h, other, state.drop_front(2));
        Value second = arith::AddIOp::create(nb, loc, t, one);
        Value hasSecond = arith::CmpIOp::create(
            nb, loc, arith::CmpIPredicate::ult, second, count);
        auto branch = scf::IfOp::create(
            nb, loc, hasSecond,
            [&](OpBuilder &tb, Location loc) {
              scf::YieldOp::create(tb, loc,
                                   step(tb, loc, second, first[0], h,
                                        ArrayRef(first).drop_front()));
            },
            [&](OpBuilder &eb, Location loc) {
              SmallVector<Value> next = first;
              next[0] =
                  linalg::CopyOp::create(eb, loc, first[0], h).getResult(0);
              scf::YieldOp::create(eb, loc, next);
            });
        SmallVector<Value> next = {branch.getResult(0), first[0]};
        llvm::append_range(next, branch.getResults().drop_front());
        scf::YieldOp::create(nb, loc, next);
      });
  SmallVector<Value> results = {loop.getResult(0)};
  llvm::append_range(results, loop.getResults().drop_front(2));
  return results;
}

/// The time loop of fusedPackedStep, double-buffered (emitDoubleBufferedLoop).
/// Returns {y, h_T, c_T}.
SmallVector<Value> fusedPackedTimeLoop(OpBuilder &b, Location loc,
                                       LSTMRecurrenceOp op, OpFoldResult seq,
                                       OpFoldResult batch) {
  Emitter emit(b, loc);
  int64_t hidden = op.getHiddenSize();
  Type elementType =
      cast<RankedTensorType>(op.getInputGates().getType()).getElementType();
  OpFoldResult hiddenSize = b.getIndexAttr(hidden);
  Value h0 = initialState(emit, op.getH0(), batch, hidden, elementType);
  Value c0 = initialState(emit, op.getC0(), batch, hidden, elementType);
  Value y = emit.empty({seq, batch, hiddenSize}, elementType);
  Value hOther = emit.empty({batch, hiddenSize}, elementType);
  Value gates = emit.empty({batch, b.getIndexAttr(4 * hidden)}, elementType);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seq);
  // Carried besides h: c, gates, y.
  SmallVector<Value> results = emitDoubleBufferedLoop(
      b, loc, steps, h0, hOther, {c0, gates, y},
      [&](OpBuilder &nb, Location loc, Value iteration, Value hIn, Value hOut,
          ValueRange carried) {
        Value t = stepTime(nb, loc, iteration, steps, op.getReverse());
        SmallVector<Value> next = fusedPackedStep(
            nb, loc, op.getInputGates(), t, op.getWHh(), *op.getGateTile(), hIn,
            hOut, carried[0], carried[1], batch, hidden);
        next.push_back(
            insertStep(nb, loc, next[0], carried[2], t, batch, hidden));
        return next; // h_t, c_t, gates, y
      });
  return {results[3], results[0], results[1]};
}

struct LowerLSTM : OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    int64_t hidden = op.getHiddenSize();
    int64_t inputSize = inputType.getShape()[2];
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    OpFoldResult batch = inputSizes[1];
    SmallVector<OpFoldResult> gateSizes = {batch,
                                           rewriter.getIndexAttr(4 * hidden)};
    // Both biases are folded into one vector.
    Value bias;
    if (op.getBIh())
      bias = emit.elementwise(
          {op.getBIh(), op.getBHh()}, op.getBIh(),
          [](OpBuilder &nested, Location loc, ValueRange args) {
            return arith::AddFOp::create(nested, loc, args[0], args[1])
                .getResult();
          });
    Type elementType = inputType.getElementType();
    SmallVector<Value> scratch;
    std::optional<int64_t> projected;
    if (op.getWHr()) {
      projected = op.getOutputSize();
      scratch.push_back(projectedStepScratch(emit, batch, hidden, elementType));
    }
    SmallVector<Value> results = emitTimeLoop(
        rewriter, loc, inputSizes[0], batch, hidden, elementType, op.getH0(),
        op.getC0(), scratch, op.getReverse(),
        [&](OpBuilder &b, Location loc, Value t, ValueRange state) {
          Emitter emit(b, loc);
          Value x = timeSlice(b, loc, op.getInput(), t, batch, 0, inputSize);
          Value gates = bias ? emit.broadcastLast(bias, gateSizes)
                             : emit.filled(gateSizes, elementType, 0.0);
          gates = emit.accumulateMatmulTransposed(x, op.getWIh(), gates);
          if (!projected)
            return separateStep(b, loc, gates, op.getWHh(), state[0], state[1],
                                batch, hidden);
          return projectedStep(b, loc, gates, op.getWHh(), op.getWHr(), state,
                               batch, hidden);
        },
        projected);
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

struct LowerLSTMRecurrence : OpRewritePattern<LSTMRecurrenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMRecurrenceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto gatesType = cast<RankedTensorType>(op.getInputGates().getType());
    int64_t hidden = op.getHiddenSize();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInputGates());
    OpFoldResult batch = sizes[1];
    bool fused = op.getCell() == CellSchedule::fused;
    if (fused && cast<RankedTensorType>(op.getWHh().getType()).getRank() >= 3) {
      replaceWithCasts(rewriter, op,
                       fusedPackedTimeLoop(rewriter, loc, op, sizes[0], batch));
      return success();
    }
    Emitter emit(rewriter, loc);
    Type elementType = gatesType.getElementType();
    SmallVector<Value> scratch;
    if (fused)
      scratch.push_back(
          emit.empty({batch, rewriter.getIndexAttr(hidden)}, elementType));
    std::optional<int64_t> projected;
    if (op.getWHr()) {
      projected = op.getOutputSize();
      scratch.push_back(projectedStepScratch(emit, batch, hidden, elementType));
    }
    SmallVector<Value> results = emitTimeLoop(
        rewriter, loc, sizes[0], batch, hidden, elementType, op.getH0(),
        op.getC0(), scratch, op.getReverse(),
        [&](OpBuilder &b, Location loc, Value t, ValueRange state) {
          if (fused)
            return fusedStep(b, loc, op.getInputGates(), t, op.getWHh(),
                             op.getGateTile(), state[0], state[1], state[2],
                             batch, hidden);
          Value gates =
              timeSlice(b, loc, op.getInputGates(), t, batch, 0, 4 * hidden);
          if (projected)
            return projectedStep(b, loc, gates, op.getWHh(), op.getWHr(), state,
                                 batch, hidden);
          return separateStep(b, loc, gates, op.getWHh(), state[0], state[1],
                              batch, hidden);
        },
        projected);
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

/// Whether layer `layer` has a step in diagonal `s`: t = s - l in [0, T).
Value layerActive(OpBuilder &b, Location loc, Value s, Value steps,
                  int64_t layer) {
  Value first = arith::ConstantIndexOp::create(b, loc, layer);
  Value end = arith::AddIOp::create(b, loc, steps, first);
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, s, first),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, s, end));
}

/// The number of diagonal steps of a wavefront of `layers` over `steps`:
/// T + L - 1.
Value diagonalCount(OpBuilder &b, Location loc, Value steps, int64_t layers) {
  return arith::AddIOp::create(
      b, loc, steps, arith::ConstantIndexOp::create(b, loc, layers - 1));
}

/// The diagonal steps s of a wavefront: an scf.for over T + L - 1 (never
/// unrolled) carrying `inits`; `diagonal` gets s and the carried values and
/// returns their next values.
scf::ForOp emitDiagonalLoop(OpBuilder &b, Location loc, Value steps,
                            int64_t layers, ValueRange inits, StepFn diagonal) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ForOp::create(
      b, loc, zero, diagonalCount(b, loc, steps, layers), one, inits,
      [&](OpBuilder &nested, Location loc, Value s, ValueRange carried) {
        scf::YieldOp::create(nested, loc, diagonal(nested, loc, s, carried));
      });
}

/// The fused wavefront: every layer's state lives in one [B, L, Hmax] tensor
/// (layer l's units at [:, l, 0:H_l]; the rest is padding when hidden sizes
/// differ), and each diagonal step is one parallel loop nest over (batch
/// row, unit j, layer l), the layer innermost so that any even split of the
/// iterations gives each thread its share of every layer's work. A unit of
/// layer l with a step in the diagonal sums its gates from the bias and
/// layer l-1's h (or, for layer 0, the precomputed input gates) and its own
/// h, all read from the state the previous diagonal wrote, and applies the
/// cell; the other units carry their h over. h is double-buffered: a loop
/// iteration runs two diagonals, the first from h into a second buffer, the
/// second back (an odd count's last diagonal is followed by a copy instead),
/// so no diagonal copies the state before it starts. The steps of all layers
/// thus run in parallel with one synchronization per diagonal.
SmallVector<Value> fusedWavefront(OpBuilder &b, Location loc,
                                  LSTMWavefrontOp op, OpFoldResult seq,
                                  OpFoldResult batch) {
  Emitter emit(b, loc);
  Type elementType =
      cast<RankedTensorType>(op.getInputGates().getType()).getElementType();
  int64_t layers = op.getNumLayers();
  SmallVector<int64_t> hidden;
  for (int64_t layer = 0; layer < layers; ++layer)
    hidden.push_back(op.getHiddenSize(layer));
  int64_t widest = *llvm::max_element(hidden);
  std::optional<ArrayRef<int64_t>> tiles = op.getGateTiles();
  SmallVector<OpFoldResult> stateSizes = {batch, b.getIndexAttr(layers),
                                          b.getIndexAttr(widest)};
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  auto layerOffsets = [&](int64_t layer) {
    return SmallVector<OpFoldResult>{zero, b.getIndexAttr(layer), zero};
  };
  auto layerSizes = [&](int64_t layer) {
    return SmallVector<OpFoldResult>{batch, one, b.getIndexAttr(hidden[layer])};
  };
  SmallVector<OpFoldResult> unitStrides = {one, one, one};
  // The layers' initial states side by side; absent ones are zero.
  auto stacked = [&](ValueRange perLayer) {
    Value state = emit.filled(stateSizes, elementType, 0.0);
    for (auto [layer, initial] : llvm::enumerate(perLayer))
      state = tensor::InsertSliceOp::create(b, loc, initial, state,
                                            layerOffsets(layer),
                                            layerSizes(layer), unitStrides);
    return state;
  };
  // Layer l's [B, H_l] part of a state.
  auto layerPart = [&](OpBuilder &b, Value state, int64_t layer) -> Value {
    auto type = RankedTensorType::get(
        {cast<RankedTensorType>(state.getType()).getShape()[0], hidden[layer]},
        elementType);
    return tensor::ExtractSliceOp::create(b, loc, type, state,
                                          layerOffsets(layer),
                                          layerSizes(layer), unitStrides);
  };
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seq);
  Value h0 = stacked(op.getH0());
  auto stateType = cast<RankedTensorType>(h0.getType());
  MLIRContext *context = b.getContext();
  // Iterations (row, unit, layer); the state is indexed (row, layer, unit).
  AffineMap stateMap = AffineMap::get(
      3, 0,
      {b.getAffineDimExpr(0), b.getAffineDimExpr(2), b.getAffineDimExpr(1)},
      context);
  // Diagonal s: reads hPrev, writes every unit of hOut, updates c in place.
  // Returns {h, y, c}.
  auto diagonal = [&](OpBuilder &b, Location loc, Value s, Value y, Value hPrev,
                      Value hOut, Value c) -> SmallVector<Value> {
    auto cell = linalg::GenericOp::create(
        b, loc, TypeRange{stateType, stateType}, ValueRange{},
        ValueRange{hOut, c}, ArrayRef<AffineMap>{stateMap, stateMap},
        SmallVector<IteratorType>(3, IteratorType::parallel),
        [&](OpBuilder &nb, Location loc, ValueRange args) {
          Value row = linalg::IndexOp::create(nb, loc, 0);
          Value j = linalg::IndexOp::create(nb, loc, 1);
          Value layerIndex = linalg::IndexOp::create(nb, loc, 2);
          // What a unit without a step in this diagonal keeps.
          SmallVector<Value> carriedOver = {
              tensor::ExtractOp::create(nb, loc, hPrev,
                                        ValueRange{row, layerIndex, j}),
              args[1]};
          SmallVector<Type> cellTypes = {elementType, elementType};
          auto perLayer = scf::IndexSwitchOp::create(
              nb, loc, cellTypes, layerIndex,
              llvm::to_vector(llvm::seq<int64_t>(0, layers)), layers);
          // Unreachable: the layer index is below L.
          OpBuilder::InsertionGuard guard(nb);
          nb.createBlock(&perLayer.getDefaultRegion());
          scf::YieldOp::create(nb, loc, carriedOver);
          for (int64_t layer = 0; layer < layers; ++layer) {
            nb.createBlock(&perLayer.getCaseRegions()[layer]);
            Value active = layerActive(nb, loc, s, steps, layer);
            // Padding beyond a narrower layer's units never changes.
            if (hidden[layer] < widest)
              active = arith::AndIOp::create(
                  nb, loc, active,
                  arith::CmpIOp::create(
                      nb, loc, arith::CmpIPredicate::ult, j,
                      arith::ConstantIndexOp::create(nb, loc, hidden[layer])));
            auto step = scf::IfOp::create(
                nb, loc, active,
                [&](OpBuilder &ib, Location loc) {
                  std::optional<int64_t> tile;
                  if (tiles)
                    tile = (*tiles)[layer];
                  SmallVector<Value> rows =
                      gateRows(ib, loc, j, hidden[layer], tile);
                  SmallVector<Value> sums;
                  auto layerConstant = [&](int64_t index) -> Value {
                    return arith::ConstantIndexOp::create(ib, loc, index);
                  };
                  if (layer == 0) {
                    // Input gates are in PyTorch's layout; t = s.
                    for (int64_t gate = 0; gate < 4; ++gate) {
                      Value column = arith::AddIOp::create(
                          ib, loc, j, layerConstant(gate * hidden[0]));
                      sums.push_back(tensor::ExtractOp::create(
                          ib, loc, op.getInputGates(),
                          ValueRange{s, row, column}));
                    }
                  } else {
                    for (Value gateRow : rows)
                      sums.push_back(tensor::ExtractOp::create(
                          ib, loc, op.getBias()[layer - 1],
                          ValueRange{gateRow}));
                    sums = accumulateGates(ib, loc, sums, rows,
                                           {hPrev,
                                            {row, layerConstant(layer - 1)},
                                            op.getWIh()[layer - 1]});
                  }
                  sums = accumulateGates(
                      ib, loc, sums, rows,
                      {hPrev, {row, layerConstant(layer)}, op.getWHh()[layer]});
                  auto [hNext, cNext] = lstmCell(ib, loc, sums[0], sums[1],
                                                 sums[2], sums[3], args[1]);
                  scf::YieldOp::create(ib, loc, ValueRange{hNext, cNext});
                },
                [&](OpBuilder &ib, Location loc) {
                  scf::YieldOp::create(ib, loc, carriedOver);
                });
            scf::YieldOp::create(nb, loc, step.getResults());
          }
          nb.setInsertionPointAfter(perLayer);
          linalg::YieldOp::create(nb, loc, perLayer.getResults());
        });
    SmallVector<int64_t> gateTiles(layers, 0);
    if (tiles)
      gateTiles.assign(tiles->begin(), tiles->end());
    markUnitStep(b, cell, /*layered=*/true, hidden, gateTiles);
    Value h = cell.getResult(0);
    c = cell.getResult(1);
    // The last layer's step s - (L - 1), if it had one, goes to y.
    Value lastActive = layerActive(b, loc, s, steps, layers - 1);
    auto output = scf::IfOp::create(
        b, loc, lastActive,
        [&](OpBuilder &ib, Location loc) {
          Value t = arith::SubIOp::create(
              ib, loc, s, arith::ConstantIndexOp::create(ib, loc, layers - 1));
          scf::YieldOp::create(ib, loc,
                               insertStep(ib, loc, layerPart(ib, h, layers - 1),
                                          y, t, batch, hidden.back()));
        },
        [&](OpBuilder &ib, Location loc) { scf::YieldOp::create(ib, loc, y); });
    return SmallVector<Value>{h, output.getResult(0), c};
  };
  // Carried besides h: y, c.
  SmallVector<Value> loop = emitDoubleBufferedLoop(
      b, loc, diagonalCount(b, loc, steps, layers), h0,
      emit.empty(stateSizes, elementType),
      {emit.empty({seq, batch, b.getIndexAttr(hidden.back())}, elementType),
       stacked(op.getC0())},
      [&](OpBuilder &nb, Location loc, Value s, Value hIn, Value hOut,
          ValueRange carried) {
        return diagonal(nb, loc, s, carried[0], hIn, hOut, carried[1]);
      });
  // loop: h, y, c.
  SmallVector<Value> results = {loop[1]};
  for (Value state : {loop[0], loop[2]})
    for (int64_t layer = 0; layer < layers; ++layer)
      results.push_back(layerPart(b, state, layer));
  return results;
}

/// The separate wavefront: in each diagonal step, layer by layer, the
/// separate step schedule (a [B, 4H] gate tensor, then the cell). Layers
/// are visited last to first, so that layer l reads layer l-1's h_t (the
/// value carried into the diagonal) before layer l-1 overwrites it in place.
SmallVector<Value> separateWavefront(OpBuilder &b, Location loc,
                                     LSTMWavefrontOp op, OpFoldResult seq,
                                     OpFoldResult batch) {
  Emitter emit(b, loc);
  Type elementType =
      cast<RankedTensorType>(op.getInputGates().getType()).getElementType();
  int64_t layers = op.getNumLayers();
  int64_t lastHidden = op.getHiddenSize(layers - 1);
  // Carried: y, then every layer's h and c.
  SmallVector<Value> inits = {
      emit.empty({seq, batch, b.getIndexAttr(lastHidden)}, elementType)};
  for (int64_t layer = 0; layer < layers; ++layer) {
    int64_t hidden = op.getHiddenSize(layer);
    inits.push_back(
        initialState(emit, op.getH0().empty() ? Value() : op.getH0()[layer],
                     batch, hidden, elementType));
    inits.push_back(
        initialState(emit, op.getC0().empty() ? Value() : op.getC0()[layer],
                     batch, hidden, elementType));
  }
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seq);
  scf::ForOp loop = emitDiagonalLoop(
      b, loc, steps, layers, inits,
      [&](OpBuilder &b, Location loc, Value s, ValueRange carried) {
        SmallVector<Value> next(carried);
        for (int64_t layer = layers - 1; layer >= 0; --layer) {
          int64_t hidden = op.getHiddenSize(layer);
          bool last = layer == layers - 1;
          ValueRange state = carried.slice(1 + 2 * layer, 2);
          SmallVector<Value> kept(state);
          if (last)
            kept.push_back(carried[0]);
          auto step = scf::IfOp::create(
              b, loc, layerActive(b, loc, s, steps, layer),
              [&](OpBuilder &ib, Location loc) {
                Emitter emit(ib, loc);
                Value t = arith::SubIOp::create(
                    ib, loc, s, arith::ConstantIndexOp::create(ib, loc, layer));
                Value gates;
                if (layer == 0) {
                  gates = timeSlice(ib, loc, op.getInputGates(), t, batch, 0,
                                    4 * hidden);
                } else {
                  gates =
                      emit.broadcastLast(op.getBias()[layer - 1],
                                         {batch, ib.getIndexAttr(4 * hidden)});
                  // Layer l-1's h_t, not yet advanced in this diagonal.
                  gates = emit.accumulateMatmulTransposed(
                      carried[1 + 2 * (layer - 1)], op.getWIh()[layer - 1],
                      gates);
                }
                SmallVector<Value> updated =
                    separateStep(ib, loc, gates, op.getWHh()[layer], state[0],
                                 state[1], batch, hidden);
                if (last)
                  updated.push_back(insertStep(ib, loc, updated[0], carried[0],
                                               t, batch, hidden));
                scf::YieldOp::create(ib, loc, updated);
              },
              [&](OpBuilder &ib, Location loc) {
                scf::YieldOp::create(ib, loc, kept);
              });
          next[1 + 2 * layer] = step.getResult(0);
          next[2 + 2 * layer] = step.getResult(1);
          if (last)
            next[0] = step.getResult(2);
        }
        return next;
      });
  SmallVector<Value> results = {loop.getResult(0)};
  for (int64_t stateIndex = 0; stateIndex < 2; ++stateIndex)
    for (int64_t layer = 0; layer < layers; ++layer)
      results.push_back(loop.getResult(1 + 2 * layer + stateIndex));
  return results;
}

struct LowerLSTMWavefront : OpRewritePattern<LSTMWavefrontOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMWavefrontOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInputGates());
    SmallVector<Value> results =
        op.getCell() == CellSchedule::fused
            ? fusedWavefront(rewriter, loc, op, sizes[0], sizes[1])
            : separateWavefront(rewriter, loc, op, sizes[0], sizes[1]);
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

/// A gather: every row of the result reads the row of the input it holds.
struct LowerInterleaveGates : OpRewritePattern<InterleaveGatesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(InterleaveGatesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t tile = op.getTile(), hidden = type.getDimSize(0) / 4;
    unsigned rank = type.getRank();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext()),
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange) {
          auto constant = [&](int64_t value) {
            return arith::ConstantIndexOp::create(b, loc, value).getResult();
          };
          // Row r = (j / K) * 4K + g * K + j % K holds input row g * H + j.
          Value row = linalg::IndexOp::create(b, loc, 0);
          Value tileRows = constant(4 * tile);
          Value tiles = arith::DivUIOp::create(b, loc, row, tileRows);
          Value inTile = arith::RemUIOp::create(b, loc, row, tileRows);
          Value gate = arith::DivUIOp::create(b, loc, inTile, constant(tile));
          Value lane = arith::RemUIOp::create(b, loc, inTile, constant(tile));
          Value unit = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, tiles, constant(tile)),
              lane);
          SmallVector<Value> indices = {arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, gate, constant(hidden)),
              unit)};
          for (unsigned dim = 1; dim < rank; ++dim)
            indices.push_back(linalg::IndexOp::create(b, loc, dim));
          Value value =
              tensor::ExtractOp::create(b, loc, op.getInput(), indices);
          linalg::YieldOp::create(b, loc, value);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// result[p, k, r] = input[p * tile + r, k], zero past the last row.
struct LowerPackPanels : OpRewritePattern<PackPanelsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PackPanelsOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, packPanels(rewriter, op.getLoc(), op.getInput(), op.getTile(),
                       op.getPairs()));
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

//===----------------------------------------------------------------------===//
// Training: gradients and the update
//===----------------------------------------------------------------------===//

/// An uninitialized tensor with the type and sizes of `like` (of a static
/// type: sizes only, no op reads `like`).
Value emptyLike(Emitter &emit, Value like) {
  return emit.empty(tensor::getMixedSizes(emit.b, emit.loc, like),
                    cast<RankedTensorType>(like.getType()).getElementType());
}

/// A zero tensor with the type and sizes of `like`.
Value zerosLike(Emitter &emit, Value like) {
  return emit.filled(tensor::getMixedSizes(emit.b, emit.loc, like),
                     cast<RankedTensorType>(like.getType()).getElementType(),
                     0.0);
}

struct LowerCrossEntropyGrad : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    Value logits = op.getLogits();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    unsigned rank = logitsType.getRank();
    Type elementType = logitsType.getElementType();
    auto [max, logSum] = emit.logSumExpParts(logits);
    // The scale of every row: d_loss per token (none), or d_loss over the
    // token count (mean) or not (sum).
    // A rank-0 d_loss stays a tensor, read by the kernel rather than by the
    // host (whose reads of device memory the CUDA pipeline rejects).
    Value scale = op.getDLoss();
    if (op.getReduction() == Reduction::mean) {
      Value count = emit.countOf(
          tensor::getMixedSizes(rewriter, loc, op.getTargets()), elementType);
      scale = emit.elementwise(
          {scale}, scale, [&](OpBuilder &b, Location loc, ValueRange args) {
            return arith::DivFOp::create(b, loc, args[0], count).getResult();
          });
    }
    SmallVector<Value> inputs = {logits, max, logSum, op.getTargets(), scale};
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineMap> maps(inputs.size() + 1, emit.leadingMap(rank));
    maps[0] = maps.back() = AffineMap::getMultiDimIdentityMap(rank, context);
    if (op.getReduction() != Reduction::none)
      maps[4] = AffineMap::get(rank, 0, {}, context);
    Value init =
        emit.empty(tensor::getMixedSizes(rewriter, loc, logits), elementType);
    // (softmax - one_hot(target)) * scale
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
            maps, SmallVector<IteratorType>(rank, IteratorType::parallel),
            [&](OpBuilder &b, Location loc, ValueRange args) {
              Value shifted = arith::SubFOp::create(
                  b, loc, arith::SubFOp::create(b, loc, args[0], args[1]),
                  args[2]);
              Value probability = math::ExpOp::create(b, loc, shifted);
              Value column = arith::IndexCastOp::create(
                  b, loc, b.getI64Type(),
                  linalg::IndexOp::create(b, loc, rank - 1));
              Value isTarget = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq, column, args[3]);
              Value one = arith::ConstantOp::create(
                  b, loc, elementType, b.getFloatAttr(elementType, 1.0));
              Value zero = arith::ConstantOp::create(
                  b, loc, elementType, b.getFloatAttr(elementType, 0.0));
              Value oneHot =
                  arith::SelectOp::create(b, loc, isTarget, one, zero);
              Value gradient = arith::MulFOp::create(
                  b, loc, arith::SubFOp::create(b, loc, probability, oneHot),
                  args[4]);
              linalg::YieldOp::create(b, loc, gradient);
            })
            .getResult(0);
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

struct LowerLinearGrad : OpRewritePattern<LinearGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearGradOp op,
                                PatternRewriter &rewriter) const override {
    Emitter emit(rewriter, op.getLoc());
    // Results nobody reads (a model input's gradient, an absent bias's) are
    // not computed; their placeholder folds away.
    Value dResult = op.getDResult();
    Value dInput = op.getDInput().use_empty()
                       ? emptyLike(emit, op.getInput())
                       : emit.accumulateMatmul(dResult, op.getWeight(),
                                               zerosLike(emit, op.getInput()));
    Value dWeight = emit.accumulateRowProducts(dResult, op.getInput(),
                                               zerosLike(emit, op.getWeight()));
    Value dBias = op.getDBias().use_empty()
                      ? emptyLike(emit, op.getDBias())
                      : emit.accumulateColumnSums(
                            dResult, zerosLike(emit, op.getDBias()));
    replaceWithCasts(rewriter, op, {dInput, dWeight, dBias});
    return success();
  }
};

/// `size + 1`, static where `size` is.
OpFoldResult plusOne(OpBuilder &b, Location loc, OpFoldResult size) {
  if (std::optional<int64_t> value = getConstantIntValue(size))
    return b.getIndexAttr(*value + 1);
  return arith::AddIOp::create(b, loc, cast<Value>(size),
                               arith::ConstantIndexOp::create(b, loc, 1))
      .getResult();
}

/// `sequence` [T, B, N] shifted one step later: row t holds row t-1 of
/// `sequence`, row 0 zeros; as a [T+1, B, N] tensor whose rows 1..T are
/// `sequence` (slice [0, T) of it is the shifted sequence).
Value withZeroStepBefore(Emitter &emit, Value sequence) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(emit.b, emit.loc, sequence);
  SmallVector<OpFoldResult> extended = sizes;
  extended[0] = plusOne(emit.b, emit.loc, sizes[0]);
  Value zeros = emit.filled(
      extended, cast<RankedTensorType>(sequence.getType()).getElementType(),
      0.0);
  OpFoldResult zero = emit.b.getIndexAttr(0), one = emit.b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(emit.b, emit.loc, sequence, zeros,
                                       ArrayRef<OpFoldResult>{one, zero, zero},
                                       sizes,
                                       ArrayRef<OpFoldResult>{one, one, one});
}

/// Rows [offset, offset + count) of a [T', B, N] tensor.
Value stepRange(Emitter &emit, Value sequence, OpFoldResult offset,
                OpFoldResult count) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(emit.b, emit.loc, sequence);
  sizes[0] = count;
  OpFoldResult zero = emit.b.getIndexAttr(0), one = emit.b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      emit.b, emit.loc, sequence, ArrayRef<OpFoldResult>{offset, zero, zero},
      sizes, ArrayRef<OpFoldResult>{one, one, one});
}

Value oneMinus(OpBuilder &b, Location loc, Value x) {
  Value one = arith::ConstantOp::create(b, loc, x.getType(),
                                        b.getFloatAttr(x.getType(), 1.0));
  return arith::SubFOp::create(b, loc, one, x);
}

/// Backward through time of one layer (recur.lstm_grad's description has
/// the equations). Three phases: the gates of every step recomputed from x
/// and the shifted y in two GEMMs over all steps, and the cell states in an
/// elementwise scan; the reverse time loop, whose step is one GEMM (the
/// recurrent gradient dgates_t · w_hh) and one fused elementwise pass over
/// [B, H]; the weight and input gradients as GEMMs over all steps at once.
struct LowerLSTMGrad : OpRewritePattern<LSTMGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    Type elementType = inputType.getElementType();
    int64_t hidden =
        cast<RankedTensorType>(op.getWHh().getType()).getDimSize(1);
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    OpFoldResult seq = inputSizes[0], batch = inputSizes[1];
    OpFoldResult hiddenSize = rewriter.getIndexAttr(hidden);
    SmallVector<OpFoldResult> gateSizes = {seq, batch,
                                           rewriter.getIndexAttr(4 * hidden)};

    // Phase 1: gate pre-activations of every step, and c_{-1..T-1}.
    Value bias = emit.elementwise(
        {op.getBIh(), op.getBHh()}, op.getBIh(),
        [](OpBuilder &b, Location loc, ValueRange args) {
          return arith::AddFOp::create(b, loc, args[0], args[1]).getResult();
        });
    Value gates = emit.broadcastLast(bias, gateSizes);
    gates = emit.accumulateMatmulTransposed(op.getInput(), op.getWIh(), gates);
    Value yBefore = stepRange(emit, withZeroStepBefore(emit, op.getY()),
                              rewriter.getIndexAttr(0), seq);
    gates = emit.accumulateMatmulTransposed(yBefore, op.getWHh(), gates);

    // cells[t + 1] = c_t; cells[0] = 0.
    OpFoldResult seqPlusOne = plusOne(rewriter, loc, seq);
    Value cells =
        emit.filled({seqPlusOne, batch, hiddenSize}, elementType, 0.0);
    Value zero = emit.constantIndex(0), one = emit.constantIndex(1);
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, seq);
    auto gateSlices = [&](OpBuilder &b, Location loc, Value t) {
      SmallVector<Value> slices;
      for (int64_t gate = 0; gate < 4; ++gate)
        slices.push_back(
            timeSlice(b, loc, gates, t, batch, gate * hidden, hidden));
      return slices;
    };
    auto identity = [&](unsigned count) {
      return SmallVector<AffineMap>(
          count, AffineMap::getMultiDimIdentityMap(2, rewriter.getContext()));
    };
    SmallVector<IteratorType> parallel2(2, IteratorType::parallel);
    auto scan = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{cells},
        [&](OpBuilder &b, Location loc, Value t, ValueRange state) {
          SmallVector<Value> gate = gateSlices(b, loc, t);
          Value cPrev = timeSlice(b, loc, state[0], t, batch, 0, hidden);
          Value next = arith::AddIOp::create(b, loc, t, one);
          Value cInit = timeSlice(b, loc, state[0], next, batch, 0, hidden);
          Value c = Emitter(b, loc).elementwiseInto(
              ValueRange{gate[0], gate[1], gate[2], cPrev}, cInit,
              [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                Value in = sigmoid(b, loc, args[0]);
                Value forget = sigmoid(b, loc, args[1]);
                Value candidate = math::TanhOp::create(b, loc, args[2]);
                return arith::AddFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, forget, args[3]),
                    arith::MulFOp::create(b, loc, in, candidate));
              });
          scf::YieldOp::create(
              b, loc, insertStep(b, loc, c, state[0], next, batch, hidden));
        });
    cells = scan.getResult(0);

    // Phase 2: t = T-1 … 0, carrying dh (from step t+1's gates) and dc.
    Value dGatesInit = emit.empty(gateSizes, elementType);
    Value dhInit = emit.filled({batch, hiddenSize}, elementType, 0.0);
    Value dcInit = emit.filled({batch, hiddenSize}, elementType, 0.0);
    auto reverse = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{dGatesInit, dhInit, dcInit},
        [&](OpBuilder &b, Location loc, Value i, ValueRange state) {
          Emitter emit(b, loc);
          Value t = arith::SubIOp::create(
              b, loc, arith::SubIOp::create(b, loc, steps, one), i);
          Value next = arith::AddIOp::create(b, loc, t, one);
          SmallVector<Value> inputs = gateSlices(b, loc, t);
          inputs.push_back(timeSlice(b, loc, cells, next, batch, 0, hidden));
          inputs.push_back(timeSlice(b, loc, cells, t, batch, 0, hidden));
          inputs.push_back(timeSlice(b, loc, op.getDY(), t, batch, 0, hidden));
          inputs.push_back(state[1]);
          Value dGateInit = emit.empty({batch, hiddenSize}, elementType);
          // Outputs: the four gate gradients, then dc for step t-1 (in place
          // of dc).
          auto cell = linalg::GenericOp::create(
              b, loc,
              TypeRange{dGateInit.getType(), dGateInit.getType(),
                        dGateInit.getType(), dGateInit.getType(),
                        state[2].getType()},
              inputs,
              ValueRange{dGateInit, dGateInit, dGateInit, dGateInit, state[2]},
              identity(13), parallel2,
              [](OpBuilder &b, Location loc, ValueRange args) {
                Value in = sigmoid(b, loc, args[0]);
                Value forget = sigmoid(b, loc, args[1]);
                Value candidate = math::TanhOp::create(b, loc, args[2]);
                Value out = sigmoid(b, loc, args[3]);
                Value c = args[4], cPrev = args[5];
                Value dh = arith::AddFOp::create(b, loc, args[6], args[7]);
                Value tanhC = math::TanhOp::create(b, loc, c);
                auto mul = [&](Value x, Value y) {
                  return arith::MulFOp::create(b, loc, x, y).getResult();
                };
                Value dc = arith::AddFOp::create(
                    b, loc, args[12],
                    mul(mul(dh, out), oneMinus(b, loc, mul(tanhC, tanhC))));
                Value dIn =
                    mul(mul(dc, candidate), mul(in, oneMinus(b, loc, in)));
                Value dForget =
                    mul(mul(dc, cPrev), mul(forget, oneMinus(b, loc, forget)));
                Value dCandidate = mul(
                    mul(dc, in), oneMinus(b, loc, mul(candidate, candidate)));
                Value dOut =
                    mul(mul(dh, tanhC), mul(out, oneMinus(b, loc, out)));
                linalg::YieldOp::create(b, loc,
                                        ValueRange{dIn, dForget, dCandidate,
                                                   dOut, mul(dc, forget)});
              });
          Value dGates = state[0];
          OpFoldResult zeroAttr = b.getIndexAttr(0),
                       oneAttr = b.getIndexAttr(1);
          for (int64_t gate = 0; gate < 4; ++gate)
            dGates = tensor::InsertSliceOp::create(
                b, loc, cell.getResult(gate), dGates,
                ArrayRef<OpFoldResult>{t, zeroAttr,
                                       b.getIndexAttr(gate * hidden)},
                ArrayRef<OpFoldResult>{oneAttr, batch, hiddenSize},
                ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
          // dh for step t-1: dgates_t · w_hh, in place of dh.
          Value dGatesStep = timeSlice(b, loc, dGates, t, batch, 0, 4 * hidden);
          Value zeroFloat = emit.constantFloat(elementType, 0.0);
          Value dhZero = linalg::FillOp::create(b, loc, ValueRange{zeroFloat},
                                                ValueRange{state[1]})
                             .getResult(0);
          Value dh = emit.accumulateMatmul(dGatesStep, op.getWHh(), dhZero);
          scf::YieldOp::create(b, loc,
                               ValueRange{dGates, dh, cell.getResult(4)});
        });
    Value dGates = reverse.getResult(0);

    // Phase 3: every step's contribution at once.
    Value dInput = op.getDInput().use_empty()
                       ? emptyLike(emit, op.getInput())
                       : emit.accumulateMatmul(dGates, op.getWIh(),
                                               zerosLike(emit, op.getInput()));
    Value dWIh = emit.accumulateRowProducts(dGates, op.getInput(),
                                            zerosLike(emit, op.getWIh()));
    Value dWHh = emit.accumulateRowProducts(dGates, yBefore,
                                            zerosLike(emit, op.getWHh()));
    Value dBias =
        emit.accumulateColumnSums(dGates, zerosLike(emit, op.getBIh()));
    replaceWithCasts(rewriter, op, {dInput, dWIh, dWHh, dBias});
    return success();
  }
};

/// Rows of the table summed by id, one id after another (ids may repeat):
/// whole rows in one loop, or (`rowBlocks` > 0) in an scf.forall whose tasks
/// each own one column of one block of rows.
struct LowerEmbeddingGrad : OpRewritePattern<EmbeddingGradOp> {
  LowerEmbeddingGrad(MLIRContext *context, int64_t rowBlocks)
      : OpRewritePattern(context), rowBlocks(rowBlocks) {}
  int64_t rowBlocks;

  LogicalResult matchAndRewrite(EmbeddingGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto idsType = cast<RankedTensorType>(op.getIds().getType());
    auto dResultType = cast<RankedTensorType>(op.getDResult().getType());
    int64_t columns = dResultType.getShape().back();
    // Ids as one dimension, d_result as [count, E].
    Value ids = op.getIds(), dResult = op.getDResult();
    if (idsType.getRank() == 0) {
      ids = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({1}, idsType.getElementType()),
          ids, ArrayRef<ReassociationIndices>{});
      dResult = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({1, columns}, dResultType.getElementType()),
          dResult, ArrayRef<ReassociationIndices>{{0, 1}});
    } else {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, idsType.getRank()));
      ids = tensor::CollapseShapeOp::create(
          rewriter, loc, ids, ArrayRef<ReassociationIndices>{all});
      dResult = tensor::CollapseShapeOp::create(
          rewriter, loc, dResult,
          ArrayRef<ReassociationIndices>{all, {idsType.getRank()}});
    }
    Value table = zerosLike(emit, op.getDTable());
    Value count = tensor::DimOp::create(rewriter, loc, ids, 0);
    OpFoldResult zeroAttr = rewriter.getIndexAttr(0),
                 oneAttr = rewriter.getIndexAttr(1),
                 width = rewriter.getIndexAttr(columns);
    // The runtime checks that ids lie in [0, V) before running.
    if (rowBlocks > 0) {
      replaceWithCasts(
          rewriter, op,
          blockParallelSum(emit, ids, dResult, table, count, rowBlocks));
      return success();
    }
    auto rowType =
        RankedTensorType::get({columns}, dResultType.getElementType());
    Value sums = forEachId(
        emit, ids, count, table,
        [&](OpBuilder &b, Location loc, Value p, Value id, Value state) {
          auto row = [&](Value source, Value index) {
            return tensor::ExtractSliceOp::create(
                b, loc, rowType, source,
                ArrayRef<OpFoldResult>{index, zeroAttr},
                ArrayRef<OpFoldResult>{oneAttr, width},
                ArrayRef<OpFoldResult>{oneAttr, oneAttr});
          };
          Value target = row(state, id);
          Value sum = Emitter(b, loc).elementwiseInto(
              ValueRange{row(dResult, p)}, target,
              [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                return arith::AddFOp::create(b, loc, args[1], args[0]);
              });
          return tensor::InsertSliceOp::create(
                     b, loc, sum, state, ArrayRef<OpFoldResult>{id, zeroAttr},
                     ArrayRef<OpFoldResult>{oneAttr, width},
                     ArrayRef<OpFoldResult>{oneAttr, oneAttr})
              .getResult();
        });
    replaceWithCasts(rewriter, op, sums);
    return success();
  }

  /// A loop over p < count carrying `init`: `body(p, ids[p] as an index,
  /// state)` gives the next state.
  static Value forEachId(
      Emitter &emit, Value ids, Value count, Value init,
      function_ref<Value(OpBuilder &, Location, Value, Value, Value)> body) {
    return scf::ForOp::create(
               emit.b, emit.loc, emit.constantIndex(0), count,
               emit.constantIndex(1), ValueRange{init},
               [&](OpBuilder &b, Location loc, Value p, ValueRange state) {
                 Value id = arith::IndexCastOp::create(
                     b, loc, b.getIndexType(),
                     tensor::ExtractOp::create(b, loc, ids, ValueRange{p}));
                 scf::YieldOp::create(b, loc, body(b, loc, p, id, state[0]));
               })
        .getResult(0);
  }

  /// table[ids[p], e] += dResult[p, e] in an scf.forall over blocks of
  /// table rows and the table's columns: task (r, e) owns column e of row
  /// block r and walks every p, adding the ids in its block, so tasks never
  /// write the same element.
  static Value blockParallelSum(Emitter &emit, Value ids, Value dResult,
                                Value table, Value count, int64_t rowBlocks) {
    OpBuilder &b = emit.b;
    Location loc = emit.loc;
    auto tableType = cast<RankedTensorType>(table.getType());
    int64_t rows = tableType.getDimSize(0), columns = tableType.getDimSize(1);
    int64_t blockRows = llvm::divideCeil(rows, std::min(rowBlocks, rows));
    int64_t blocks = llvm::divideCeil(rows, blockRows);
    auto forall = scf::ForallOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{b.getIndexAttr(blocks), b.getIndexAttr(columns)},
        ValueRange{table}, /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value block = forall.getInductionVar(0), e = forall.getInductionVar(1);
    Value shared = forall.getRegionIterArgs()[0];
    // Rows [first, first + size): the last block may be short.
    Value first =
        arith::MulIOp::create(b, loc, block, emit.constantIndex(blockRows));
    Value size = arith::MinSIOp::create(
        b, loc, emit.constantIndex(blockRows),
        arith::SubIOp::create(b, loc, emit.constantIndex(rows), first));
    OpFoldResult oneAttr = b.getIndexAttr(1);
    SmallVector<OpFoldResult> offsets = {first, e}, sizes = {size, oneAttr},
                              strides = {oneAttr, oneAttr};
    auto columnType =
        RankedTensorType::get({blockRows == rows ? rows : ShapedType::kDynamic},
                              tableType.getElementType());
    Value column = tensor::ExtractSliceOp::create(b, loc, columnType, shared,
                                                  offsets, sizes, strides);
    Value walk = forEachId(
        emit, ids, count, column,
        [&](OpBuilder &nb, Location loc, Value p, Value id, Value state) {
          // Unsigned: an id below the block wraps around past its end.
          Value local = arith::SubIOp::create(nb, loc, id, first);
          Value inBlock = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::ult, local, size);
          auto add = scf::IfOp::create(
              nb, loc, inBlock,
              [&](OpBuilder &ib, Location loc) {
                Value sum = arith::AddFOp::create(
                    ib, loc,
                    tensor::ExtractOp::create(ib, loc, state,
                                              ValueRange{local}),
                    tensor::ExtractOp::create(ib, loc, dResult,
                                              ValueRange{p, e}));
                scf::YieldOp::create(ib, loc,
                                     tensor::InsertOp::create(
                                         ib, loc, sum, state, ValueRange{local})
                                         .getResult());
              },
              [&](OpBuilder &ib, Location loc) {
                scf::YieldOp::create(ib, loc, state);
              });
          return add.getResult(0);
        });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, walk, shared, offsets, sizes,
                                          strides);
    return forall.getResult(0);
  }
};

/// `x * scale` elementwise, `scale` a rank-0 tensor.
Value scaled(Emitter &emit, Value x, Value scale) {
  return emit.elementwise(
      {x, scale}, x, [&](OpBuilder &b, Location loc, ValueRange args) {
        return arith::MulFOp::create(b, loc, args[0], args[1]).getResult();
      });
}

struct LowerClipGradNorm : OpRewritePattern<ClipGradNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipGradNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    Type elementType =
        cast<RankedTensorType>(op.getNorm().getType()).getElementType();
    // The norm and the coefficient stay rank-0 tensors, computed and read by
    // kernels (on the device, for CUDA) rather than by the host.
    SmallVector<Value> sums =
        llvm::map_to_vector(op.getGradients(), [&](Value gradient) {
          return emit.sumOfSquares(gradient);
        });
    Value norm = emit.elementwise(
        sums, sums.front(), [&](OpBuilder &b, Location loc, ValueRange args) {
          Value total = Emitter(b, loc).constantFloat(elementType, 0.0);
          for (Value sum : args)
            total = arith::AddFOp::create(b, loc, total, sum);
          return math::SqrtOp::create(b, loc, total).getResult();
        });
    // torch.nn.utils.clip_grad_norm_: min(1, max_norm / (norm + 1e-6)).
    Value scale = emit.elementwise(
        {norm}, norm, [&](OpBuilder &b, Location loc, ValueRange args) {
          Emitter nested(b, loc);
          Value coefficient = arith::DivFOp::create(
              b, loc,
              nested.constantFloat(elementType,
                                   op.getMaxNorm().convertToDouble()),
              arith::AddFOp::create(b, loc, args[0],
                                    nested.constantFloat(elementType, 1e-6)));
          return arith::MinimumFOp::create(
                     b, loc, coefficient,
                     nested.constantFloat(elementType, 1.0))
              .getResult();
        });
    SmallVector<Value> results = {norm};
    for (Value gradient : op.getGradients())
      results.push_back(scaled(emit, gradient, scale));
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

/// weight - lr * gradient, written into the weight's tensor: bufferization
/// updates the bound weight in place where the model allows it.
struct LowerSGDUpdate : OpRewritePattern<SGDUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SGDUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto type = cast<RankedTensorType>(op.getType());
    Value lr =
        emit.constantFloat(type.getElementType(), op.getLr().convertToDouble());
    Value result = emit.elementwiseInto(
        ValueRange{op.getGradient()}, op.getWeight(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value step = arith::MulFOp::create(b, loc, lr, args[0]);
          return arith::SubFOp::create(b, loc, args[1], step);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertRecurToLinalgPass
    : mlir::recur::impl::ConvertRecurToLinalgBase<ConvertRecurToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerEmbedding, LowerLinear, LowerLSTM, LowerLSTMRecurrence,
                 LowerLSTMWavefront, LowerInterleaveGates, LowerPackPanels,
                 LowerLogSoftmax, LowerCrossEntropy, LowerCrossEntropyGrad,
                 LowerLinearGrad, LowerLSTMGrad, LowerClipGradNorm,
                 LowerSGDUpdate, LowerTranspose>(context);
    patterns.add<LowerEmbeddingGrad>(context, embeddingGradRowBlocks);
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
    // Model inputs, weights and derived tensors belong to the caller:
    // bufferization must copy rather than update them in place. The weights
    // a training step updates are the exception: their update is written
    // over them (recur-update-weights-in-place checks that it was).
    getOperation().walk([](func::FuncOp function) {
      llvm::StringSet<> updated;
      for (unsigned index = 0; index < function.getNumResults(); ++index)
        if (auto name = function.getResultAttrOfType<StringAttr>(
                index, RecurDialect::kUpdateAttrName))
          updated.insert(name.getValue());
      for (unsigned index = 0; index < function.getNumArguments(); ++index) {
        auto weight = function.getArgAttrOfType<StringAttr>(
            index, RecurDialect::kWeightAttrName);
        bool owned = function.getArgAttr(index, RecurDialect::kInputAttrName) ||
                     weight ||
                     function.getArgAttr(index, RecurDialect::kDerivedAttrName);
        if (owned)
          function.setArgAttr(
              index, bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(function.getContext(),
                            weight && updated.contains(weight.getValue())));
      }
    });
  }
};

} // namespace

Value mlir::recur::packPanels(OpBuilder &b, Location loc, Value source,
                              int64_t tile, bool pairs) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t split = type.getDimSize(0), other = type.getDimSize(1);
  Type elementType = type.getElementType();
  int64_t panels = llvm::divideCeilSigned(split, tile);
  auto packedType =
      pairs ? RankedTensorType::get({panels, other / 2, tile, 2}, elementType)
            : RankedTensorType::get({panels, other, tile}, elementType);
  unsigned rank = packedType.getRank();
  Value init =
      tensor::EmptyOp::create(b, loc, packedType.getShape(), elementType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{packedType}, ValueRange{}, ValueRange{init},
      AffineMap::getMultiDimIdentityMap(rank, b.getContext()),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange) {
        auto constant = [&](int64_t value) {
          return arith::ConstantIndexOp::create(nb, loc, value).getResult();
        };
        // Row p * tile + j, column k (pairs: column 2i + s).
        Value lane = linalg::IndexOp::create(nb, loc, 2);
        Value otherIndex = linalg::IndexOp::create(nb, loc, 1);
        if (pairs)
          otherIndex = arith::AddIOp::create(
              nb, loc, arith::MulIOp::create(nb, loc, otherIndex, constant(2)),
              linalg::IndexOp::create(nb, loc, 3));
        Value index = arith::AddIOp::create(
            nb, loc,
            arith::MulIOp::create(nb, loc, linalg::IndexOp::create(nb, loc, 0),
                                  constant(tile)),
            lane);
        Value inside = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                             index, constant(split));
        // Padding reads index 0 and keeps zero.
        Value safe =
            arith::SelectOp::create(nb, loc, inside, index, constant(0));
        Value value = tensor::ExtractOp::create(nb, loc, source,
                                                ValueRange{safe, otherIndex});
        Value zero = arith::ConstantOp::create(
            nb, loc, elementType, nb.getFloatAttr(elementType, 0.0));
        linalg::YieldOp::create(
            nb, loc,
            arith::SelectOp::create(nb, loc, inside, value, zero).getResult());
      });
  return generic.getResult(0);
}
