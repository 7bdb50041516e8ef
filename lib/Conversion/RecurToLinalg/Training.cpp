//===- Training.cpp - gradients and the weight update ---------------------===//
//
// The ops recur-differentiate emits: the gradients of cross_entropy, linear,
// lstm (backward through time) and embedding, gradient clipping and the SGD
// update, written over the weight it updates.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "recur/Utils/Remarks.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace {

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
/// `sequence`, row 0 `first` ([B, N]) or zeros; as a [T+1, B, N] tensor
/// whose rows 1..T are `sequence` (slice [0, T) of it is the shifted
/// sequence).
Value withStepBefore(Emitter &emit, Value sequence, Value first) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(emit.b, emit.loc, sequence);
  SmallVector<OpFoldResult> extended = sizes;
  extended[0] = plusOne(emit.b, emit.loc, sizes[0]);
  Type elementType =
      cast<RankedTensorType>(sequence.getType()).getElementType();
  OpFoldResult zero = emit.b.getIndexAttr(0), one = emit.b.getIndexAttr(1);
  Value steps = first ? emit.empty(extended, elementType)
                      : emit.filled(extended, elementType, 0.0);
  if (first)
    steps = insertStep(
        emit.b, emit.loc, first, steps, emit.constantIndex(0), sizes[1],
        cast<RankedTensorType>(sequence.getType()).getDimSize(2));
  return tensor::InsertSliceOp::create(emit.b, emit.loc, sequence, steps,
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

/// 1 where step t of row b is within the row's length (t < lengths[b]), 0
/// past it: a [T, B] tensor of `elementType`.
Value stepMask(Emitter &emit, Value lengths, OpFoldResult seq,
               OpFoldResult batch, Type elementType) {
  MLIRContext *context = emit.b.getContext();
  Value init = emit.empty({seq, batch}, elementType);
  AffineMap rows =
      AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context);
  return linalg::GenericOp::create(
             emit.b, emit.loc, TypeRange{init.getType()}, ValueRange{lengths},
             ValueRange{init},
             ArrayRef<AffineMap>{rows,
                                 AffineMap::getMultiDimIdentityMap(2, context)},
             SmallVector<IteratorType>(2, IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value t = arith::IndexCastOp::create(
                   b, loc, args[0].getType(),
                   linalg::IndexOp::create(b, loc, 0));
               Value active = arith::CmpIOp::create(
                   b, loc, arith::CmpIPredicate::slt, t, args[0]);
               Value value =
                   arith::UIToFPOp::create(b, loc, elementType, active);
               linalg::YieldOp::create(b, loc, value);
             })
      .getResult(0);
}

/// Row t of a [T, B] mask, as [B].
Value maskStep(OpBuilder &b, Location loc, Value mask, Value t,
               OpFoldResult batch) {
  auto type = cast<RankedTensorType>(mask.getType());
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(1)}, type.getElementType()), mask,
      ArrayRef<OpFoldResult>{t, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{one, batch}, ArrayRef<OpFoldResult>{one, one});
}

/// A float zero of `like`'s type.
Value zeroLike(OpBuilder &b, Location loc, Value like) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(like.getType(), 0.0));
}

/// A reverse step's results for a row past its length (`active` false): the
/// first `gates` (gate gradients) zero, and each after them, a gradient for
/// the step before, `passed` on unchanged.
void keepPastLength(OpBuilder &b, Location loc, Value active,
                    MutableArrayRef<Value> results, unsigned gates,
                    ArrayRef<Value> passed) {
  for (unsigned k = 0; k < gates; ++k)
    results[k] = arith::SelectOp::create(b, loc, active, results[k],
                                         zeroLike(b, loc, results[k]));
  for (auto [k, value] : llvm::enumerate(passed))
    results[gates + k] =
        arith::SelectOp::create(b, loc, active, results[gates + k], value);
}

/// Step T-1-i: a reverse time loop's step at iteration i of `steps`.
Value stepFromEnd(OpBuilder &b, Location loc, Value steps, Value i) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return arith::SubIOp::create(b, loc,
                               arith::SubIOp::create(b, loc, steps, one), i);
}

/// Whether a mask value says active.
Value isActive(OpBuilder &b, Location loc, Value mask) {
  Value half = arith::ConstantOp::create(b, loc, mask.getType(),
                                         b.getFloatAttr(mask.getType(), 0.5));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, mask, half);
}

/// A recurrent layer's sizes, as its backward uses them: T and B of its
/// input, H, the element type, and the [T, B, G·H] size of its gates.
struct LayerSizes {
  OpFoldResult seq, batch, hiddenSize;
  int64_t hidden;
  Type elementType;
  SmallVector<OpFoldResult> gateSizes;

  LayerSizes(PatternRewriter &rewriter, Location loc, Value input, Value wHh,
             int64_t gates) {
    elementType = cast<RankedTensorType>(input.getType()).getElementType();
    hidden = cast<RankedTensorType>(wHh.getType()).getDimSize(1);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    seq = sizes[0];
    batch = sizes[1];
    hiddenSize = rewriter.getIndexAttr(hidden);
    gateSizes = {seq, batch, rewriter.getIndexAttr(gates * hidden)};
  }
};

/// Gate sums to accumulate products onto: `bias` ([G·H]) at every step and
/// row, or zeros without one.
Value gatesFrom(Emitter &emit, const LayerSizes &sizes, Value bias) {
  return bias ? emit.broadcastLast(bias, sizes.gateSizes)
              : emit.filled(sizes.gateSizes, sizes.elementType, 0.0);
}

/// The gradients of an input product `x · w_ihᵀ` over all steps, given its
/// gates' `dGates`: d_input (unless `dInputResult` is unused: then an
/// uninitialized placeholder) and d_w_ih.
std::pair<Value, Value> inputProductGradients(Emitter &emit, Value dGates,
                                              Value input, Value wIh,
                                              Value dInputResult) {
  Value dInput =
      dInputResult.use_empty()
          ? emptyLike(emit, input)
          : emit.accumulateMatmul(dGates, wIh, zerosLike(emit, input));
  return {dInput,
          emit.accumulateRowProducts(dGates, input, zerosLike(emit, wIh))};
}

/// A bias gradient, the column sums of `dGates` ([T, B, G·H]), unless
/// `result` is unused.
Value biasGradient(Emitter &emit, const LayerSizes &sizes, Value dGates,
                   Value result) {
  SmallVector<OpFoldResult> size = {sizes.gateSizes[2]};
  return result.use_empty()
             ? emit.empty(size, sizes.elementType)
             : emit.accumulateColumnSums(
                   dGates, emit.filled(size, sizes.elementType, 0.0));
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
    LayerSizes sizes(rewriter, loc, op.getInput(), op.getWHh(), 4);
    Type elementType = sizes.elementType;
    int64_t hidden = sizes.hidden;
    OpFoldResult seq = sizes.seq, batch = sizes.batch,
                 hiddenSize = sizes.hiddenSize;
    SmallVector<OpFoldResult> gateSizes = sizes.gateSizes;

    // Phase 1: gate pre-activations of every step, and c_{-1..T-1}.
    Value bias =
        op.getBIh()
            ? emit.elementwise({op.getBIh(), op.getBHh()}, op.getBIh(),
                               [](OpBuilder &b, Location loc, ValueRange args) {
                                 return arith::AddFOp::create(b, loc, args[0],
                                                              args[1])
                                     .getResult();
                               })
            : Value();
    Value gates = emit.accumulateMatmulTransposed(op.getInput(), op.getWIh(),
                                                  gatesFrom(emit, sizes, bias));
    Value yBefore = stepRange(emit, withStepBefore(emit, op.getY(), op.getH0()),
                              rewriter.getIndexAttr(0), seq);
    gates = emit.accumulateMatmulTransposed(yBefore, op.getWHh(), gates);

    // cells[t + 1] = c_t; cells[0] = c0, or 0.
    OpFoldResult seqPlusOne = plusOne(rewriter, loc, seq);
    Value cells =
        emit.filled({seqPlusOne, batch, hiddenSize}, elementType, 0.0);
    if (op.getC0())
      cells = insertStep(rewriter, loc, op.getC0(), cells,
                         emit.constantIndex(0), batch, hidden);
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
    // With lengths, a row's state stays as it is past its length (its final
    // state is its last step's), and its steps there get no gradient.
    Value mask = op.getLengths()
                     ? stepMask(emit, op.getLengths(), seq, batch, elementType)
                     : Value();
    AffineMap rowMap =
        AffineMap::get(2, 0, {getAffineDimExpr(0, rewriter.getContext())},
                       rewriter.getContext());
    auto scan = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{cells},
        [&](OpBuilder &b, Location loc, Value t, ValueRange state) {
          SmallVector<Value> gate = gateSlices(b, loc, t);
          Value cPrev = timeSlice(b, loc, state[0], t, batch, 0, hidden);
          Value next = arith::AddIOp::create(b, loc, t, one);
          Value cInit = timeSlice(b, loc, state[0], next, batch, 0, hidden);
          SmallVector<Value> inputs = {gate[0], gate[1], gate[2], cPrev};
          SmallVector<AffineMap> maps = identity(6);
          if (mask)
            inputs.push_back(maskStep(b, loc, mask, t, batch));
          else
            maps.pop_back();
          maps[4] = mask ? rowMap : maps[4];
          Value c =
              linalg::GenericOp::create(
                  b, loc, TypeRange{cInit.getType()}, inputs, ValueRange{cInit},
                  maps, parallel2,
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    Value in = sigmoid(b, loc, args[0]);
                    Value forget = sigmoid(b, loc, args[1]);
                    Value candidate = math::TanhOp::create(b, loc, args[2]);
                    Value c = arith::AddFOp::create(
                        b, loc, arith::MulFOp::create(b, loc, forget, args[3]),
                        arith::MulFOp::create(b, loc, in, candidate));
                    if (mask)
                      c = arith::SelectOp::create(
                          b, loc, isActive(b, loc, args[4]), c, args[3]);
                    linalg::YieldOp::create(b, loc, c);
                  })
                  .getResult(0);
          scf::YieldOp::create(
              b, loc, insertStep(b, loc, c, state[0], next, batch, hidden));
        });
    cells = scan.getResult(0);

    // Phase 2: t = T-1 … 0, carrying dh (from step t+1's gates) and dc.
    Value dGatesInit = emit.empty(gateSizes, elementType);
    // dh and dc after the last step: those of the final state, or zeros.
    Value dhInit = op.getDHN()
                       ? op.getDHN()
                       : emit.filled({batch, hiddenSize}, elementType, 0.0);
    Value dcInit = op.getDCN()
                       ? op.getDCN()
                       : emit.filled({batch, hiddenSize}, elementType, 0.0);
    // Without d_y (a loss on the final state only), each step reads zeros.
    Value noDY = op.getDY()
                     ? Value()
                     : emit.filled({batch, hiddenSize}, elementType, 0.0);
    auto reverse = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{dGatesInit, dhInit, dcInit},
        [&](OpBuilder &b, Location loc, Value i, ValueRange state) {
          Emitter emit(b, loc);
          Value t = stepFromEnd(b, loc, steps, i);
          Value next = arith::AddIOp::create(b, loc, t, one);
          SmallVector<Value> inputs = gateSlices(b, loc, t);
          inputs.push_back(timeSlice(b, loc, cells, next, batch, 0, hidden));
          inputs.push_back(timeSlice(b, loc, cells, t, batch, 0, hidden));
          inputs.push_back(
              op.getDY() ? timeSlice(b, loc, op.getDY(), t, batch, 0, hidden)
                         : noDY);
          // dh carried: an input, or with lengths an output written in place
          // (what passes a step past a row's length unchanged).
          inputs.push_back(mask ? maskStep(b, loc, mask, t, batch) : state[1]);
          Value dGateInit = emit.empty({batch, hiddenSize}, elementType);
          // Outputs: the four gate gradients, then dc for step t-1 (in place
          // of dc); with lengths also the part of dh that passes a step past
          // its row's length unchanged.
          SmallVector<Value> outputs = {dGateInit, dGateInit, dGateInit,
                                        dGateInit, state[2]};
          if (mask)
            outputs.push_back(state[1]);
          SmallVector<AffineMap> maps =
              identity(inputs.size() + outputs.size());
          if (mask)
            maps[inputs.size() - 1] = rowMap;
          unsigned firstOutput = inputs.size();
          auto cell = linalg::GenericOp::create(
              b, loc, ValueRange(outputs).getTypes(), inputs, outputs, maps,
              parallel2, [&](OpBuilder &b, Location loc, ValueRange args) {
                Value in = sigmoid(b, loc, args[0]);
                Value forget = sigmoid(b, loc, args[1]);
                Value candidate = math::TanhOp::create(b, loc, args[2]);
                Value out = sigmoid(b, loc, args[3]);
                Value c = args[4], cPrev = args[5];
                Value dhCarried = mask ? args[firstOutput + 5] : args[7];
                Value dcCarried = args[firstOutput + 4];
                Value active = mask ? isActive(b, loc, args[7]) : Value();
                Value dh = arith::AddFOp::create(b, loc, args[6], dhCarried);
                Value tanhC = math::TanhOp::create(b, loc, c);
                auto mul = [&](Value x, Value y) {
                  return arith::MulFOp::create(b, loc, x, y).getResult();
                };
                Value dc = arith::AddFOp::create(
                    b, loc, dcCarried,
                    mul(mul(dh, out), oneMinus(b, loc, mul(tanhC, tanhC))));
                SmallVector<Value> results = {
                    mul(mul(dc, candidate), mul(in, oneMinus(b, loc, in))),
                    mul(mul(dc, cPrev), mul(forget, oneMinus(b, loc, forget))),
                    mul(mul(dc, in),
                        oneMinus(b, loc, mul(candidate, candidate))),
                    mul(mul(dh, tanhC), mul(out, oneMinus(b, loc, out))),
                    mul(dc, forget)};
                if (mask) {
                  // dh's part that passes a step on: none within the length.
                  results.push_back(zeroLike(b, loc, dh));
                  keepPastLength(b, loc, active, results, 4,
                                 {dcCarried, dhCarried});
                }
                linalg::YieldOp::create(b, loc, results);
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
          Value dhStart;
          if (mask) {
            dhStart = cell.getResult(5);
          } else {
            Value zeroFloat = emit.constantFloat(elementType, 0.0);
            dhStart = linalg::FillOp::create(b, loc, ValueRange{zeroFloat},
                                             ValueRange{state[1]})
                          .getResult(0);
          }
          Value dh = emit.accumulateMatmul(dGatesStep, op.getWHh(), dhStart);
          if (dh.getType() != state[1].getType())
            dh = tensor::CastOp::create(b, loc, state[1].getType(), dh);
          scf::YieldOp::create(b, loc,
                               ValueRange{dGates, dh, cell.getResult(4)});
        });
    Value dGates = reverse.getResult(0);

    // Phase 3: every step's contribution at once.
    auto [dInput, dWIh] = inputProductGradients(emit, dGates, op.getInput(),
                                                op.getWIh(), op.getDInput());
    Value dWHh = emit.accumulateRowProducts(dGates, yBefore,
                                            zerosLike(emit, op.getWHh()));
    Value dBias = biasGradient(emit, sizes, dGates, op.getDBias());
    replaceWithCasts(rewriter, op,
                     {dInput, dWIh, dWHh, dBias, reverse.getResult(1),
                      reverse.getResult(2)});
    return success();
  }
};

/// Backward through time of one GRU layer (recur.gru_grad's description has
/// the equations): both gate products of every step recomputed from x and
/// the shifted y as two GEMMs; the reverse time loop, whose step is one
/// fused elementwise pass over [B, H] (with lengths, steps past a row's
/// length give no gradient and pass dh on) and the recurrent GEMM
/// dgh_t · w_hh accumulated onto dh ⊙ z in place; the weight, bias and input
/// gradients as GEMMs and column sums over all steps at once.
struct LowerGRUGrad : OpRewritePattern<GRUGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GRUGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    MLIRContext *context = rewriter.getContext();
    LayerSizes sizes(rewriter, loc, op.getInput(), op.getWHh(), 3);
    Type elementType = sizes.elementType;
    int64_t hidden = sizes.hidden;
    OpFoldResult seq = sizes.seq, batch = sizes.batch,
                 hiddenSize = sizes.hiddenSize;
    SmallVector<OpFoldResult> gateSizes = sizes.gateSizes;
    // Phase 1: gi = x · w_ihᵀ + b_ih and gh = y_{t-1} · w_hhᵀ + b_hh.
    Value gi = emit.accumulateMatmulTransposed(
        op.getInput(), op.getWIh(), gatesFrom(emit, sizes, op.getBIh()));
    Value yBefore = stepRange(emit, withStepBefore(emit, op.getY(), op.getH0()),
                              rewriter.getIndexAttr(0), seq);
    Value gh = emit.accumulateMatmulTransposed(
        yBefore, op.getWHh(), gatesFrom(emit, sizes, op.getBHh()));
    Value mask = op.getLengths()
                     ? stepMask(emit, op.getLengths(), seq, batch, elementType)
                     : Value();
    AffineMap rowMap =
        AffineMap::get(2, 0, {getAffineDimExpr(0, context)}, context);

    // Phase 2: t = T-1 … 0, carrying dh.
    Value zero = emit.constantIndex(0), one = emit.constantIndex(1);
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, seq);
    Value dhInit = op.getDHN()
                       ? op.getDHN()
                       : emit.filled({batch, hiddenSize}, elementType, 0.0);
    Value noDY = op.getDY()
                     ? Value()
                     : emit.filled({batch, hiddenSize}, elementType, 0.0);
    SmallVector<IteratorType> parallel2(2, IteratorType::parallel);
    auto reverse = scf::ForOp::create(
        rewriter, loc, zero, steps, one,
        ValueRange{emit.empty(gateSizes, elementType),
                   emit.empty(gateSizes, elementType), dhInit},
        [&](OpBuilder &b, Location loc, Value i, ValueRange state) {
          Emitter emit(b, loc);
          Value t = stepFromEnd(b, loc, steps, i);
          SmallVector<Value> inputs;
          for (Value gates : {gi, gh})
            for (int64_t gate = 0; gate < 3; ++gate)
              inputs.push_back(
                  timeSlice(b, loc, gates, t, batch, gate * hidden, hidden));
          inputs.push_back(timeSlice(b, loc, yBefore, t, batch, 0, hidden));
          inputs.push_back(
              op.getDY() ? timeSlice(b, loc, op.getDY(), t, batch, 0, hidden)
                         : noDY);
          if (mask)
            inputs.push_back(maskStep(b, loc, mask, t, batch));
          Value dGateInit = emit.empty({batch, hiddenSize}, elementType);
          // Outputs: dr, dz, dn (the input product's gate gradients), dn ⊙ r
          // (the recurrent product's n part), and dh ⊙ z in place of dh.
          SmallVector<Value> outputs = {dGateInit, dGateInit, dGateInit,
                                        dGateInit, state[2]};
          SmallVector<AffineMap> maps = SmallVector<AffineMap>(
              inputs.size() + outputs.size(),
              AffineMap::getMultiDimIdentityMap(2, context));
          if (mask)
            maps[inputs.size() - 1] = rowMap;
          unsigned firstOutput = inputs.size();
          auto cell = linalg::GenericOp::create(
              b, loc, ValueRange(outputs).getTypes(), inputs, outputs, maps,
              parallel2, [&](OpBuilder &b, Location loc, ValueRange args) {
                auto mul = [&](Value x, Value y) {
                  return arith::MulFOp::create(b, loc, x, y).getResult();
                };
                auto add = [&](Value x, Value y) {
                  return arith::AddFOp::create(b, loc, x, y).getResult();
                };
                Value reset = sigmoid(b, loc, add(args[0], args[3]));
                Value update = sigmoid(b, loc, add(args[1], args[4]));
                Value candidate = math::TanhOp::create(
                    b, loc, add(args[2], mul(reset, args[5])));
                Value hPrev = args[6], dhCarried = args[firstOutput + 4];
                Value dh = add(args[7], dhCarried);
                Value dn = mul(mul(dh, oneMinus(b, loc, update)),
                               oneMinus(b, loc, mul(candidate, candidate)));
                Value dz = mul(
                    mul(dh, arith::SubFOp::create(b, loc, hPrev, candidate)),
                    mul(update, oneMinus(b, loc, update)));
                Value dr =
                    mul(mul(dn, args[5]), mul(reset, oneMinus(b, loc, reset)));
                SmallVector<Value> results = {dr, dz, dn, mul(dn, reset),
                                              mul(dh, update)};
                if (mask)
                  keepPastLength(b, loc, isActive(b, loc, args[8]), results, 4,
                                 {dhCarried});
                linalg::YieldOp::create(b, loc, results);
              });
          OpFoldResult zeroAttr = b.getIndexAttr(0),
                       oneAttr = b.getIndexAttr(1);
          auto insertGate = [&](Value value, Value into, int64_t gate) {
            return tensor::InsertSliceOp::create(
                       b, loc, value, into,
                       ArrayRef<OpFoldResult>{t, zeroAttr,
                                              b.getIndexAttr(gate * hidden)},
                       ArrayRef<OpFoldResult>{oneAttr, batch, hiddenSize},
                       ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr})
                .getResult();
          };
          Value dGi = state[0], dGh = state[1];
          for (int64_t gate = 0; gate < 3; ++gate)
            dGi = insertGate(cell.getResult(gate), dGi, gate);
          dGh = insertGate(cell.getResult(0), dGh, 0);
          dGh = insertGate(cell.getResult(1), dGh, 1);
          dGh = insertGate(cell.getResult(3), dGh, 2);
          // dh for step t-1: dh ⊙ z + dgh_t · w_hh, in place of dh.
          Value dGhStep = timeSlice(b, loc, dGh, t, batch, 0, 3 * hidden);
          Value dh =
              emit.accumulateMatmul(dGhStep, op.getWHh(), cell.getResult(4));
          if (dh.getType() != state[2].getType())
            dh = tensor::CastOp::create(b, loc, state[2].getType(), dh);
          scf::YieldOp::create(b, loc, ValueRange{dGi, dGh, dh});
        });
    Value dGi = reverse.getResult(0), dGh = reverse.getResult(1);

    // Phase 3: every step's contribution at once.
    auto [dInput, dWIh] = inputProductGradients(emit, dGi, op.getInput(),
                                                op.getWIh(), op.getDInput());
    Value dWHh =
        emit.accumulateRowProducts(dGh, yBefore, zerosLike(emit, op.getWHh()));
    replaceWithCasts(
        rewriter, op,
        {dInput, dWIh, dWHh, biasGradient(emit, sizes, dGi, op.getDBIh()),
         biasGradient(emit, sizes, dGh, op.getDBHh()), reverse.getResult(2)});
    return success();
  }
};

/// Backward through time of one Elman RNN layer (recur.rnn_grad's
/// description has the equations): the reverse time loop, whose step is one
/// elementwise pass over [B, H] (the nonlinearity's derivative read off y;
/// with lengths, steps past a row's length give no gradient and pass dh on)
/// and the recurrent GEMM da_t · w_hh accumulated onto what passes, in place;
/// then the weight, bias and input gradients over all steps at once.
struct LowerRNNGrad : OpRewritePattern<RNNGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RNNGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    MLIRContext *context = rewriter.getContext();
    LayerSizes sizes(rewriter, loc, op.getInput(), op.getWHh(), 1);
    int64_t hidden = sizes.hidden;
    Value yBefore = stepRange(emit, withStepBefore(emit, op.getY(), op.getH0()),
                              rewriter.getIndexAttr(0), sizes.seq);
    Value mask = op.getLengths() ? stepMask(emit, op.getLengths(), sizes.seq,
                                            sizes.batch, sizes.elementType)
                                 : Value();
    Value zero = emit.constantIndex(0), one = emit.constantIndex(1);
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, sizes.seq);
    SmallVector<OpFoldResult> stateSizes = {sizes.batch, sizes.hiddenSize};
    Value dhInit = op.getDHN()
                       ? op.getDHN()
                       : emit.filled(stateSizes, sizes.elementType, 0.0);
    Value noDY =
        op.getDY() ? Value() : emit.filled(stateSizes, sizes.elementType, 0.0);
    bool relu = op.getRelu();
    auto reverse = scf::ForOp::create(
        rewriter, loc, zero, steps, one,
        ValueRange{emit.empty(sizes.gateSizes, sizes.elementType), dhInit},
        [&](OpBuilder &b, Location loc, Value i, ValueRange state) {
          Emitter emit(b, loc);
          Value t = stepFromEnd(b, loc, steps, i);
          SmallVector<Value> inputs = {
              timeSlice(b, loc, op.getY(), t, sizes.batch, 0, hidden),
              op.getDY()
                  ? timeSlice(b, loc, op.getDY(), t, sizes.batch, 0, hidden)
                  : noDY};
          if (mask)
            inputs.push_back(maskStep(b, loc, mask, t, sizes.batch));
          // Outputs: da_t, and in place of dh what passes to the step
          // before besides da_t · w_hh (all of dh past a row's length).
          SmallVector<Value> outputs = {
              emit.empty(stateSizes, sizes.elementType), state[1]};
          SmallVector<AffineMap> maps(
              inputs.size() + outputs.size(),
              AffineMap::getMultiDimIdentityMap(2, context));
          if (mask)
            maps[2] =
                AffineMap::get(2, 0, {getAffineDimExpr(0, context)}, context);
          unsigned firstOutput = inputs.size();
          auto cell = linalg::GenericOp::create(
              b, loc, ValueRange(outputs).getTypes(), inputs, outputs, maps,
              SmallVector<IteratorType>(2, IteratorType::parallel),
              [&](OpBuilder &b, Location loc, ValueRange args) {
                Value y = args[0], dhCarried = args[firstOutput + 1];
                Value dh = arith::AddFOp::create(b, loc, args[1], dhCarried);
                Value slope;
                if (relu) {
                  Value positive =
                      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                            y, zeroLike(b, loc, y));
                  slope =
                      arith::UIToFPOp::create(b, loc, y.getType(), positive);
                } else {
                  slope = oneMinus(b, loc, arith::MulFOp::create(b, loc, y, y));
                }
                SmallVector<Value> results = {
                    arith::MulFOp::create(b, loc, dh, slope),
                    zeroLike(b, loc, dh)};
                if (mask)
                  keepPastLength(b, loc, isActive(b, loc, args[2]), results, 1,
                                 {dhCarried});
                linalg::YieldOp::create(b, loc, results);
              });
          OpFoldResult zeroAttr = b.getIndexAttr(0),
                       oneAttr = b.getIndexAttr(1);
          Value dA = tensor::InsertSliceOp::create(
              b, loc, cell.getResult(0), state[0],
              ArrayRef<OpFoldResult>{t, zeroAttr, zeroAttr},
              ArrayRef<OpFoldResult>{oneAttr, sizes.batch, sizes.hiddenSize},
              ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
          Value dAStep = timeSlice(b, loc, dA, t, sizes.batch, 0, hidden);
          Value dh =
              emit.accumulateMatmul(dAStep, op.getWHh(), cell.getResult(1));
          if (dh.getType() != state[1].getType())
            dh = tensor::CastOp::create(b, loc, state[1].getType(), dh);
          scf::YieldOp::create(b, loc, ValueRange{dA, dh});
        });
    Value dA = reverse.getResult(0);
    auto [dInput, dWIh] = inputProductGradients(emit, dA, op.getInput(),
                                                op.getWIh(), op.getDInput());
    Value dWHh =
        emit.accumulateRowProducts(dA, yBefore, zerosLike(emit, op.getWHh()));
    replaceWithCasts(rewriter, op,
                     {dInput, dWIh, dWHh,
                      biasGradient(emit, sizes, dA, op.getDBias()),
                      reverse.getResult(1)});
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
    if (rowBlocks == 0)
      remarkMissed(op, "convert-recur-to-linalg",
                   "the embedding gradient runs as one sequential loop over "
                   "the ids",
                   "embedding-grad-row-blocks is 0 (the CPU pipeline's)");
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

} // namespace

void mlir::recur::to_linalg::populateTrainingPatterns(
    RewritePatternSet &patterns, int64_t embeddingGradRowBlocks) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LowerCrossEntropyGrad, LowerLinearGrad, LowerLSTMGrad,
               LowerGRUGrad, LowerRNNGrad, LowerClipGradNorm, LowerSGDUpdate>(
      context);
  patterns.add<LowerEmbeddingGrad>(context, embeddingGradRowBlocks);
}
