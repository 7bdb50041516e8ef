//===- Wavefront.cpp - recur.lstm_wavefront -------------------------------===//
//
// Stacked layers as one loop over the T + L - 1 diagonal steps: fused (one
// parallel loop nest over (row, unit, layer) per diagonal, h double-buffered)
// or separate (each active layer's separate step, last layer first); for
// recur.rnn_wavefront, each active layer's cell, last layer first.
//
//===----------------------------------------------------------------------===//

#include "LstmSchedules.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace {

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
  struct Diagonal {
    Value h, y, c;
  };
  auto diagonal = [&](OpBuilder &b, Location loc, Value s, Value y, Value hPrev,
                      Value hOut, Value c) -> Diagonal {
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
    return {h, /*y=*/output.getResult(0), c};
  };
  // Carried besides h: y, c.
  SmallVector<Value> loop = emitDoubleBufferedLoop(
      b, loc, diagonalCount(b, loc, steps, layers), h0,
      emit.empty(stateSizes, elementType),
      {emit.empty({seq, batch, b.getIndexAttr(hidden.back())}, elementType),
       stacked(op.getC0())},
      [&](OpBuilder &nb, Location loc, Value s, Value hIn, Value hOut,
          ValueRange carried) {
        Diagonal next = diagonal(nb, loc, s, /*y=*/carried[0], hIn, hOut,
                                 /*c=*/carried[1]);
        return SmallVector<Value>{next.h, next.y, next.c};
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

/// recur.rnn_wavefront: the T+L-1 diagonal steps carry y, every layer's
/// state, and the y_t of every layer but the last, which the next layer
/// reads as its input row in the next diagonal. In diagonal s each layer l
/// with a step (t = s - l in [0, T)) runs its cell inlined, the last layer
/// first, so that layer l reads layer l-1's y_t before layer l-1 writes its
/// next one into the same buffer.
struct LowerRNNWavefront : OpRewritePattern<RNNWavefrontOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RNNWavefrontOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter emit(rewriter, loc);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    Type elementType = inputType.getElementType();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    OpFoldResult batch = sizes[1];
    int64_t layers = op.getNumLayers();
    // Each layer's y_t: [B, Y_l], as static as the input's B.
    SmallVector<RankedTensorType> rowTypes;
    for (int64_t layer = 0; layer < layers; ++layer) {
      auto output = cast<RankedTensorType>(
          op.getCell(layer).getTerminator()->getOperand(0).getType());
      rowTypes.push_back(RankedTensorType::get(
          {inputType.getDimSize(1), output.getDimSize(1)}, elementType));
    }
    int64_t outputSize = rowTypes.back().getDimSize(1);
    // Carried: y, the states (layer by layer), the inner layers' y_t.
    SmallVector<Value> inits = {emit.empty(
        {sizes[0], batch, rewriter.getIndexAttr(outputSize)}, elementType)};
    llvm::append_range(inits, op.getInit());
    SmallVector<int64_t> firstState;
    for (int64_t layer = 0, next = 1; layer < layers; ++layer) {
      firstState.push_back(next);
      next += op.getStateCounts()[layer];
    }
    int64_t firstRow = inits.size();
    for (int64_t layer = 0; layer + 1 < layers; ++layer)
      inits.push_back(emit.empty(
          {batch, rewriter.getIndexAttr(rowTypes[layer].getDimSize(1))},
          elementType));
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[0]);
    // With lengths (rows sorted by them), each layer's step runs on the
    // rows with a step at its time.
    Value counts;
    if (Value lengths = op.getLengths()) {
      counts = activeRowCounts(rewriter, loc, lengths, sizes[0]);
      for (RankedTensorType &type : rowTypes)
        type = RankedTensorType::get({ShapedType::kDynamic, type.getDimSize(1)},
                                     elementType);
    }
    scf::ForOp loop = emitDiagonalLoop(
        rewriter, loc, steps, layers, inits,
        [&](OpBuilder &b, Location, Value s, ValueRange carried) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPoint(b.getInsertionBlock(),
                                     b.getInsertionPoint());
          SmallVector<Value> next(carried);
          for (int64_t layer = layers - 1; layer >= 0; --layer) {
            bool last = layer == layers - 1;
            int64_t states = op.getStateCounts()[layer];
            // What the step changes: the layer's state, and y or its y_t.
            SmallVector<Value> kept(carried.slice(firstState[layer], states));
            kept.push_back(last ? carried[0] : carried[firstRow + layer]);
            auto step =
                scf::IfOp::create(rewriter, loc, ValueRange(kept).getTypes(),
                                  layerActive(rewriter, loc, s, steps, layer),
                                  /*withElseRegion=*/true);
            rewriter.setInsertionPointToStart(step.elseBlock());
            scf::YieldOp::create(rewriter, loc, kept);
            rewriter.setInsertionPointToStart(step.thenBlock());
            Value t = arith::SubIOp::create(
                rewriter, loc, s,
                arith::ConstantIndexOp::create(rewriter, loc, layer));
            Value rows =
                counts ? activeRows(rewriter, loc, counts, t, batch) : Value();
            // The rows the step reads and writes: all, or the active ones.
            auto active = [&](Value value, Value time = Value()) {
              return rows ? leadingRows(rewriter, loc, value, rows, time)
                          : value;
            };
            SmallVector<Value> arguments = {
                layer == 0
                    ? (rows ? active(op.getInput(), t)
                            : timeSlice(rewriter, loc, op.getInput(), t, batch,
                                        0, inputType.getDimSize(2)))
                    : active(carried[firstRow + layer - 1])};
            for (Value state : carried.slice(firstState[layer], states))
              arguments.push_back(active(state));
            llvm::append_range(arguments, op.getLayerCaptures(layer));
            SmallVector<Value> yielded =
                inlineCell(rewriter, loc, op.getCell(layer), step.thenBlock(),
                           arguments, rowTypes[layer]);
            auto store = [&](Value value, Value buffer) {
              return rows ? insertRows(rewriter, loc, value, buffer,
                                       rewriter.getIndexAttr(0), rows)
                          : copyInto(rewriter, loc, value, buffer);
            };
            SmallVector<Value> updated;
            for (auto [value, buffer] :
                 llvm::zip_equal(ArrayRef(yielded).drop_front(),
                                 ArrayRef(kept).drop_back()))
              updated.push_back(store(value, buffer));
            if (!last)
              updated.push_back(store(yielded[0], kept.back()));
            else if (rows)
              updated.push_back(insertActiveStep(rewriter, loc, yielded[0],
                                                 carried[0], t, rows, batch));
            else
              updated.push_back(insertStep(rewriter, loc, yielded[0],
                                           carried[0], t, batch, outputSize));
            scf::YieldOp::create(rewriter, loc, updated);
            rewriter.setInsertionPointAfter(step);
            for (int64_t index = 0; index < states; ++index)
              next[firstState[layer] + index] = step.getResult(index);
            next[last ? 0 : firstRow + layer] = step.getResults().back();
          }
          b.setInsertionPoint(rewriter.getInsertionBlock(),
                              rewriter.getInsertionPoint());
          return next;
        });
    replaceWithCasts(rewriter, op, loop.getResults().take_front(firstRow));
    return success();
  }
};

} // namespace

void mlir::recur::to_linalg::populateWavefrontPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerLSTMWavefront, LowerRNNWavefront>(patterns.getContext());
}
