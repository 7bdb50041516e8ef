//===- Recurrences.cpp - recur.lstm, recur.lstm_recurrence, recur.rnn -----===//
//
// One layer's time loop (an scf.for over T, never unrolled) with the step
// schedule fusion chose: separate (the unfused recur.lstm, and a hoisted
// recurrence), fused (the gates summed in registers per unit), or fused on a
// w_hh packed for the CPU's register tile; projected layers (proj_size) run
// the separate step with the projection after the cell. A recur.rnn's time
// loop runs its cell region as the step.
//
//===----------------------------------------------------------------------===//

#include "LstmSchedules.h"

#include "recur/Utils/SplitLast.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace {

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
/// scratch...}.
LayerResults emitTimeLoop(OpBuilder &b, Location loc, OpFoldResult seq,
                          OpFoldResult batch, int64_t hidden, Type elementType,
                          Value h0, Value c0, ValueRange scratch, bool reverse,
                          StepFn step, std::optional<int64_t> projected = {}) {
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
  return {/*y=*/loop.getResult(0), /*hN=*/loop.getResult(1),
          /*cN=*/loop.getResult(2)};
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

/// The time loop of fusedPackedStep, double-buffered (emitDoubleBufferedLoop).
LayerResults fusedPackedTimeLoop(OpBuilder &b, Location loc,
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
      [&](OpBuilder &nb, Location loc, Value iteration, ValueRange hIn,
          ValueRange hOut, ValueRange carried) {
        Value t = stepTime(nb, loc, iteration, steps, op.getReverse());
        SmallVector<Value> next = fusedPackedStep(
            nb, loc, op.getInputGates(), t, op.getWHh(), *op.getGateTile(),
            hIn[0], hOut[0], carried[0], carried[1], batch, hidden);
        next.push_back(
            insertStep(nb, loc, next[0], carried[2], t, batch, hidden));
        return next; // h_t, c_t, gates, y
      });
  // results: h_T, then the carried c, gates, y.
  return {/*y=*/results[3], /*hN=*/results[0], /*cN=*/results[1]};
}

struct LowerLSTM : OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    // recur-generalize-cells makes it a recur.rnn, which takes lengths.
    if (op.getLengths())
      return rewriter.notifyMatchFailure(
          op, "takes sequence lengths: run recur-generalize-cells first");
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
    LayerResults results = emitTimeLoop(
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
    replaceWithCasts(rewriter, op, results.values());
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
      replaceWithCasts(
          rewriter, op,
          fusedPackedTimeLoop(rewriter, loc, op, sizes[0], batch).values());
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
    LayerResults results = emitTimeLoop(
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
    replaceWithCasts(rewriter, op, results.values());
    return success();
  }
};

/// `value` ([B, n]) in the rows that have a step at time `t` (t <
/// lengths[b]), and in the others `kept`'s rows (a [B, n] tensor the result
/// is written over), or zeros without `kept`.
Value maskRowsPastLength(OpBuilder &b, Location loc, Value value, Value lengths,
                         Value t, Value kept) {
  Emitter emit(b, loc);
  auto type = cast<RankedTensorType>(value.getType());
  // Compared in i64, whatever the lengths' width.
  Type lengthType = b.getI64Type();
  Value time = arith::IndexCastOp::create(b, loc, lengthType, t);
  MLIRContext *context = b.getContext();
  AffineMap rows = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap perRow = AffineMap::get(2, 0, getAffineDimExpr(0, context));
  Value init = kept ? kept
                    : emit.empty(tensor::getMixedSizes(b, loc, value),
                                 type.getElementType());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{value, lengths}, init,
             ArrayRef<AffineMap>{rows, perRow, rows},
             SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location loc, ValueRange args) {
               Value length = args[1];
               if (length.getType() != lengthType)
                 length = arith::ExtSIOp::create(nb, loc, lengthType, length);
               Value active = arith::CmpIOp::create(
                   nb, loc, arith::CmpIPredicate::slt, time, length);
               Value otherwise =
                   kept ? args[2]
                        : Value(arith::ConstantOp::create(
                              nb, loc, type.getElementType(),
                              nb.getZeroAttr(type.getElementType())));
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::SelectOp::create(nb, loc, active, args[0],
                                                      otherwise)});
             })
      .getResult(0);
}

/// The step of a recur.rnn whose rows are sorted by length (`sorted`): the
/// cell runs on the rows with a step at time `t`, a prefix of `rows`
/// (activeRowCounts), read from x_t and the carried state; the new state
/// is written over the carried one in those rows, y_t in them and zeros
/// in the others. `iterArgs` are {y, the state...}; returns the values to
/// yield.
SmallVector<Value> activeRowsStep(PatternRewriter &rewriter, Location loc,
                                  RNNOp op, Block *body, Value t, Value counts,
                                  OpFoldResult batch, ValueRange iterArgs) {
  Value rows = activeRows(rewriter, loc, counts, t, batch);
  SmallVector<Value> arguments = {
      leadingRows(rewriter, loc, op.getInput(), rows, t)};
  for (Value state : iterArgs.drop_front())
    arguments.push_back(leadingRows(rewriter, loc, state, rows));
  llvm::append_range(arguments, op.getCaptures());
  auto yType = cast<RankedTensorType>(op.getY().getType());
  auto rowType = RankedTensorType::get(
      {ShapedType::kDynamic, yType.getDimSize(2)}, yType.getElementType());
  SmallVector<Value> yielded =
      inlineCell(rewriter, loc, op.getCell(), body, arguments, rowType);
  SmallVector<Value> next = {
      insertActiveStep(rewriter, loc, yielded[0], iterArgs[0], t, rows, batch)};
  OpFoldResult zeroIndex = rewriter.getIndexAttr(0);
  for (auto [value, carried] :
       llvm::zip_equal(ArrayRef(yielded).drop_front(), iterArgs.drop_front()))
    next.push_back(insertRows(rewriter, loc, value, carried, zeroIndex, rows));
  return next;
}

/// A recurrence of any cell: the time loop carries y [T, B, Y] and the
/// state; its body is the cell, inlined with x_t, the state and the
/// captures for its arguments, and y_t stored into row t of y. With
/// `lengths`, a row past its length keeps its state and outputs zeros
/// (maskRowsPastLength): in reverse, a row's steps start at its own last.
/// With lengths `sorted`, each step runs on its active rows only
/// (activeRowsStep).
struct LowerRNN : OpRewritePattern<RNNOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RNNOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto yType = cast<RankedTensorType>(op.getY().getType());
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    OpFoldResult batch = sizes[1];
    int64_t outputSize = yType.getDimSize(2);
    SmallVector<Value> inits = {
        emit.empty({sizes[0], batch, rewriter.getIndexAttr(outputSize)},
                   yType.getElementType())};
    llvm::append_range(inits, op.getInit());
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[0]);
    Value counts;
    if (op.getLengthsSorted())
      counts = activeRowCounts(rewriter, loc, op.getLengths(), sizes[0]);
    auto loop = scf::ForOp::create(rewriter, loc, emit.constantIndex(0), steps,
                                   emit.constantIndex(1), inits);
    Block *body = loop.getBody();
    rewriter.setInsertionPointToStart(body);
    Value t =
        stepTime(rewriter, loc, loop.getInductionVar(), steps, op.getReverse());
    if (counts) {
      scf::YieldOp::create(rewriter, loc,
                           activeRowsStep(rewriter, loc, op, body, t, counts,
                                          batch, loop.getRegionIterArgs()));
      rewriter.setInsertionPointAfter(loop);
      replaceWithCasts(rewriter, op, loop.getResults());
      return success();
    }
    SmallVector<Value> arguments = {timeSlice(
        rewriter, loc, op.getInput(), t, batch, 0, inputType.getDimSize(2))};
    llvm::append_range(arguments, loop.getRegionIterArgs().drop_front());
    llvm::append_range(arguments, op.getCaptures());
    // y_t as a row of y: [B, Y] as static as the input's B.
    auto rowType = RankedTensorType::get({inputType.getDimSize(1), outputSize},
                                         yType.getElementType());
    SmallVector<Value> yielded =
        inlineCell(rewriter, loc, op.getCell(), body, arguments, rowType);
    Value lengths = op.getLengths();
    if (lengths)
      yielded[0] =
          maskRowsPastLength(rewriter, loc, yielded[0], lengths, t, Value());
    SmallVector<Value> next = {insertStep(rewriter, loc, yielded[0],
                                          loop.getRegionIterArgs()[0], t, batch,
                                          outputSize)};
    // The new state goes into the previous one's buffer, after the cell
    // has read it, so that the loop carries one buffer per state.
    for (auto [value, carried] :
         llvm::zip_equal(ArrayRef(yielded).drop_front(),
                         loop.getRegionIterArgs().drop_front())) {
      if (!lengths) {
        next.push_back(copyInto(rewriter, loc, value, carried));
        continue;
      }
      Value state = value;
      if (state.getType() != carried.getType())
        state = tensor::CastOp::create(rewriter, loc, carried.getType(), state);
      next.push_back(
          maskRowsPastLength(rewriter, loc, state, lengths, t, carried));
    }
    scf::YieldOp::create(rewriter, loc, next);
    rewriter.setInsertionPointAfter(loop);
    replaceWithCasts(rewriter, op, loop.getResults());
    return success();
  }
};

} // namespace

void mlir::recur::to_linalg::populateRecurrencePatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerLSTM, LowerLSTMRecurrence, LowerRNN>(patterns.getContext());
}
