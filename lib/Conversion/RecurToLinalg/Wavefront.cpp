//===- Wavefront.cpp - recur.lstm_wavefront -------------------------------===//
//
// Stacked layers as one loop over the T + L - 1 diagonal steps: fused (one
// parallel loop nest over (row, unit, layer) per diagonal, h double-buffered)
// or separate (each active layer's separate step, last layer first); for
// recur.rnn_wavefront, each active layer's cell, last layer first, or, when
// every cell is one unit step of one shape (the GPU's), fused like the
// LSTM's: one unit step over every layer per diagonal.
//
//===----------------------------------------------------------------------===//

#include "LstmSchedules.h"
#include "recur/IR/UnitStepCells.h"

#include "mlir/IR/Matchers.h"

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

/// Layer `layer`'s [B, H_l] part of a stacked [B, L, Hmax] state.
Value layerPartOf(OpBuilder &b, Location loc, Value state, OpFoldResult batch,
                  int64_t layer, int64_t hidden) {
  auto stateType = cast<RankedTensorType>(state.getType());
  auto type = RankedTensorType::get({stateType.getShape()[0], hidden},
                                    stateType.getElementType());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, type, state,
      SmallVector<OpFoldResult>{zero, b.getIndexAttr(layer), zero},
      SmallVector<OpFoldResult>{batch, one, b.getIndexAttr(hidden)},
      SmallVector<OpFoldResult>{one, one, one});
}

/// The layers' [B, H_l] values `perLayer` side by side in a stacked state
/// of `sizes` [B, L, Hmax]; zeros where a layer has none and in the
/// padding of narrower layers.
Value stackLayers(Emitter &emit, ValueRange perLayer,
                  ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> hidden,
                  Type elementType) {
  OpBuilder &b = emit.b;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Value state = emit.filled(sizes, elementType, 0.0);
  for (auto [layer, initial] : llvm::enumerate(perLayer))
    state = tensor::InsertSliceOp::create(
        b, emit.loc, initial, state,
        SmallVector<OpFoldResult>{zero, b.getIndexAttr(layer), zero},
        SmallVector<OpFoldResult>{sizes[0], one, b.getIndexAttr(hidden[layer])},
        SmallVector<OpFoldResult>{one, one, one});
  return state;
}

/// `y` with row s - (L - 1) set to the last layer's part of `stacked` (a
/// [B, L, H] state) if that layer had a step in diagonal `s`. With `counts`
/// (the rows sorted by length, activeRowCounts), only the active rows'
/// part, and zeros in the others.
Value insertLastLayerStep(OpBuilder &b, Location loc, Value s, Value steps,
                          int64_t layers, Value stacked, Value y,
                          OpFoldResult batch, int64_t hidden,
                          Value counts = Value()) {
  auto output = scf::IfOp::create(
      b, loc, layerActive(b, loc, s, steps, layers - 1),
      [&](OpBuilder &ib, Location loc) {
        Value t = arith::SubIOp::create(
            ib, loc, s, arith::ConstantIndexOp::create(ib, loc, layers - 1));
        if (counts) {
          Value rows = activeRows(ib, loc, counts, t, batch);
          Value last = layerPartOf(ib, loc, stacked, rows, layers - 1, hidden);
          scf::YieldOp::create(
              ib, loc, insertActiveStep(ib, loc, last, y, t, rows, batch));
          return;
        }
        Value last = layerPartOf(ib, loc, stacked, batch, layers - 1, hidden);
        scf::YieldOp::create(ib, loc,
                             insertStep(ib, loc, last, y, t, batch, hidden));
      },
      [&](OpBuilder &ib, Location loc) { scf::YieldOp::create(ib, loc, y); });
  return output.getResult(0);
}

/// The rest of a fused wavefront's diagonal step after its indices: a
/// switch on the layer whose case runs the layer's `step` (which returns
/// the values it yields) where `active(layer)` holds and keeps
/// `carriedOver` elsewhere; yields the switch's results.
void emitLayerSwitch(
    OpBuilder &b, Location loc, Value layerIndex, int64_t layers,
    ValueRange carriedOver, function_ref<Value(OpBuilder &, int64_t)> active,
    function_ref<SmallVector<Value>(OpBuilder &, int64_t)> step) {
  auto perLayer = scf::IndexSwitchOp::create(
      b, loc, carriedOver.getTypes(), layerIndex,
      llvm::to_vector(llvm::seq<int64_t>(0, layers)), layers);
  {
    OpBuilder::InsertionGuard guard(b);
    // Unreachable: the layer index is below L.
    b.createBlock(&perLayer.getDefaultRegion());
    scf::YieldOp::create(b, loc, carriedOver);
    for (int64_t layer = 0; layer < layers; ++layer) {
      b.createBlock(&perLayer.getCaseRegions()[layer]);
      auto branch = scf::IfOp::create(
          b, loc, active(b, layer),
          [&](OpBuilder &ib, Location loc) {
            scf::YieldOp::create(ib, loc, step(ib, layer));
          },
          [&](OpBuilder &ib, Location loc) {
            scf::YieldOp::create(ib, loc, carriedOver);
          });
      scf::YieldOp::create(b, loc, branch.getResults());
    }
  }
  linalg::YieldOp::create(b, loc, perLayer.getResults());
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
  auto stacked = [&](ValueRange perLayer) {
    return stackLayers(emit, perLayer, stateSizes, hidden, elementType);
  };
  auto layerPart = [&](OpBuilder &b, Value state, int64_t layer) {
    return layerPartOf(b, loc, state, batch, layer, hidden[layer]);
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
          emitLayerSwitch(
              nb, loc, layerIndex, layers, carriedOver,
              [&](OpBuilder &nb, int64_t layer) {
                Value active = layerActive(nb, loc, s, steps, layer);
                // Padding beyond a narrower layer's units never changes.
                if (hidden[layer] < widest)
                  active = arith::AndIOp::create(
                      nb, loc, active,
                      arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                            j,
                                            arith::ConstantIndexOp::create(
                                                nb, loc, hidden[layer])));
                return active;
              },
              [&](OpBuilder &ib, int64_t layer) -> SmallVector<Value> {
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
                    sums.push_back(
                        tensor::ExtractOp::create(ib, loc, op.getInputGates(),
                                                  ValueRange{s, row, column}));
                  }
                } else {
                  for (Value gateRow : rows)
                    sums.push_back(tensor::ExtractOp::create(
                        ib, loc, op.getBias()[layer - 1], ValueRange{gateRow}));
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
                return {hNext, cNext};
              });
        });
    SmallVector<int64_t> gateTiles(layers, 0);
    if (tiles)
      gateTiles.assign(tiles->begin(), tiles->end());
    markUnitStep(b, cell, /*layered=*/true, hidden, gateTiles);
    Value h = cell.getResult(0);
    c = cell.getResult(1);
    // The last layer's step s - (L - 1), if it had one, goes to y.
    y = insertLastLayerStep(b, loc, s, steps, layers, h, y, batch,
                            hidden.back());
    return {h, y, c};
  };
  // Carried besides h: y, c.
  SmallVector<Value> loop = emitDoubleBufferedLoop(
      b, loc, diagonalCount(b, loc, steps, layers), h0,
      emit.empty(stateSizes, elementType),
      {emit.empty({seq, batch, b.getIndexAttr(hidden.back())}, elementType),
       stacked(op.getC0())},
      [&](OpBuilder &nb, Location loc, Value s, ValueRange hIn, ValueRange hOut,
          ValueRange carried) {
        Diagonal next = diagonal(nb, loc, s, /*y=*/carried[0], hIn[0], hOut[0],
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

/// A [B, N] operand of a layer's cell in the fused recur.rnn wavefront, as
/// the tensor that holds it: the wavefront's input [T, B, N] at `time`, or
/// `layer`'s part of a stacked [B, L, H] buffer.
struct CellRow {
  Value tensor;
  Value time, layer;

  /// The indices of x[row, k] but the last.
  SmallVector<Value, 2> leading(Value row) const {
    if (time)
      return {time, row};
    return {row, layer};
  }
  Value element(OpBuilder &b, Location loc, Value row, Value column) const {
    SmallVector<Value> indices(leading(row));
    indices.push_back(column);
    return tensor::ExtractOp::create(b, loc, tensor, indices);
  }
};

/// Layer `cell`'s iteration (row, unit) at `b`: its unit step's body, with
/// what it read from x_t and the states read from `input` and `states`,
/// its captures from `captures` (the wavefront's operands), and each input
/// product's gate sums (x_t times a captured weight) summed here over k;
/// returns the values its body yields.
SmallVector<Value> emitCellIteration(OpBuilder &b, Location loc,
                                     const UnitStepCell &cell, Block &cellBlock,
                                     ValueRange captures, const CellRow &input,
                                     ArrayRef<CellRow> states, Value row,
                                     Value unit) {
  linalg::GenericOp step = cell.step;
  Block *body = step.getBody();
  unsigned firstCapture = 1 + states.size();
  IRMapping mapping;
  for (auto [index, capture] : llvm::enumerate(captures))
    mapping.map(cellBlock.getArgument(firstCapture + index), capture);
  // Constants of the cell that the body reads.
  step.getRegion().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *definition = operand.getDefiningOp();
          definition && definition->getBlock() == &cellBlock &&
          !mapping.contains(operand) && matchPattern(operand, m_Constant()))
        b.clone(*definition, mapping);
  });
  Value ivs[] = {row, unit};
  auto elementIndex = [&](OpOperand *operand, ArrayRef<int64_t> offsets) {
    SmallVector<Value> indices;
    for (auto [result, offset] : llvm::zip_equal(
             step.getMatchingIndexingMap(operand).getResults(), offsets)) {
      Value iv = ivs[cast<AffineDimExpr>(result).getPosition()];
      indices.push_back(
          offset
              ? arith::AddIOp::create(
                    b, loc, iv, arith::ConstantIndexOp::create(b, loc, offset))
              : iv);
    }
    return indices;
  };
  // The input products: each one's gates summed in one loop over k.
  llvm::MapVector<Operation *, SmallVector<int64_t>> productColumns;
  for (const UnitStepRead &read : cell.reads)
    if (read.source == UnitStepRead::Source::inputProduct &&
        !llvm::is_contained(productColumns[read.product], read.offsets[1]))
      productColumns[read.product].push_back(read.offsets[1]);
  DenseMap<std::pair<Operation *, int64_t>, Value> productSums;
  for (auto &[op, columns] : productColumns) {
    auto product = cast<LinearOp>(op);
    Value weight = mapping.lookup(product.getWeight());
    Value bias =
        product.getBias() ? mapping.lookup(product.getBias()) : Value();
    Type elementType = product.getResult().getType().getElementType();
    SmallVector<Value> rows, sums;
    for (int64_t column : columns) {
      Value gateRow = arith::AddIOp::create(
          b, loc, unit, arith::ConstantIndexOp::create(b, loc, column));
      rows.push_back(gateRow);
      sums.push_back(
          bias ? tensor::ExtractOp::create(b, loc, bias, gateRow).getResult()
               : arith::ConstantOp::create(b, loc,
                                           b.getFloatAttr(elementType, 0.0))
                     .getResult());
    }
    sums = accumulateGates(b, loc, sums, rows,
                           {input.tensor, input.leading(row), weight});
    for (auto [column, sum] : llvm::zip_equal(columns, sums))
      productSums[{op, column}] = sum;
  }
  for (auto [operand, read] :
       llvm::zip_equal(step.getDpsInputOperands(), cell.reads)) {
    Value element;
    switch (read.source) {
    case UnitStepRead::Source::inputProduct:
      element = productSums.lookup({read.product, read.offsets[1]});
      break;
    case UnitStepRead::Source::input:
    case UnitStepRead::Source::state: {
      const CellRow &source = read.source == UnitStepRead::Source::input
                                  ? input
                                  : states[read.index];
      SmallVector<Value> indices = elementIndex(operand, read.offsets);
      element = source.element(b, loc, indices[0], indices[1]);
      break;
    }
    case UnitStepRead::Source::capture:
      element = tensor::ExtractOp::create(b, loc, captures[read.index],
                                          elementIndex(operand, read.offsets));
      break;
    }
    mapping.map(step.getMatchingBlockArgument(operand), element);
  }
  // x_t and the states, which the body reads by element: from the rows.
  auto rowOf = [&](Value tensor) -> const CellRow * {
    auto argument = dyn_cast<BlockArgument>(tensor);
    if (!argument || argument.getOwner() != &cellBlock ||
        argument.getArgNumber() >= firstCapture)
      return nullptr;
    return argument.getArgNumber() == 0 ? &input
                                        : &states[argument.getArgNumber() - 1];
  };
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    Operation *clone = b.clone(op, mapping);
    SmallVector<tensor::ExtractOp> reads;
    clone->walk([&](tensor::ExtractOp extract) {
      if (rowOf(extract.getTensor()))
        reads.push_back(extract);
    });
    for (tensor::ExtractOp extract : reads) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(extract);
      Value element =
          rowOf(extract.getTensor())
              ->element(b, extract.getLoc(), extract.getIndices()[0],
                        extract.getIndices()[1]);
      extract.getResult().replaceAllUsesWith(element);
      extract->erase();
    }
  }
  return llvm::map_to_vector(
      body->getTerminator()->getOperands(),
      [&](Value value) { return mapping.lookup(value); });
}

/// The layers of `op` as unit steps of one shape, if every cell is one
/// (recur-fuse-cell-step's for the GPU).
std::optional<SmallVector<UnitStepCell>> unitStepLayers(RNNWavefrontOp op) {
  SmallVector<UnitStepCell> cells;
  std::string whyNot;
  for (int64_t layer = 0; layer < op.getNumLayers(); ++layer) {
    FailureOr<UnitStepCell> cell = analyzeUnitStepCell(
        op.getCell(layer), op.getStateCounts()[layer], whyNot);
    if (failed(cell) ||
        (!cells.empty() && !sameUnitStepShape(cells.front(), *cell)))
      return std::nullopt;
    cells.push_back(*cell);
  }
  return cells;
}

/// The fused recur.rnn wavefront, as the LSTM's (fusedWavefront): each
/// result of the layers' unit steps (y_t and the states) lives in a [B, L,
/// H] buffer, double-buffered, and each diagonal is one unit step over
/// (row, unit, layer), whose layer switch runs each active layer's cell: x_t
/// from the input (layer 0) or layer l-1's y_t of the diagonal before, its
/// input product summed in the step, as its recurrent product is.
///
/// With lengths (rows sorted by them, longest first), diagonal s runs on
/// the rows that have a step in it or had one in diagonal s - 1: rows
/// [0, active[s - L]) (all while s < L), since layer l's step is at time
/// s - l. A row past its length in a layer keeps its values there (a
/// select after its sums, which stay uniform over the block), and a row
/// leaves the diagonals' rows only after both buffers hold its last
/// values, so the rows past them never need writing. y gets the last
/// layer's active rows, and zeros in the others.
SmallVector<Value> fusedRNNWavefront(OpBuilder &b, Location loc,
                                     RNNWavefrontOp op,
                                     ArrayRef<UnitStepCell> cells,
                                     OpFoldResult seq, OpFoldResult batch) {
  Emitter emit(b, loc);
  const UnitStepCell &shape = cells.front();
  int64_t layers = op.getNumLayers(), hidden = shape.hidden();
  int64_t states = shape.yielded.size() - 1;
  SmallVector<int64_t> hiddenSizes(layers, hidden);
  SmallVector<OpFoldResult> sizes = {batch, b.getIndexAttr(layers),
                                     b.getIndexAttr(hidden)};
  // Each result's buffer starts from the initial state it holds, if any.
  SmallVector<Value> initial, others;
  for (auto [result, type] : llvm::enumerate(shape.step->getResultTypes())) {
    Type elementType = cast<ShapedType>(type).getElementType();
    const unsigned *state =
        llvm::find(ArrayRef(shape.yielded).drop_front(), result);
    SmallVector<Value> perLayer;
    if (state != shape.yielded.end())
      for (int64_t layer = 0; layer < layers; ++layer)
        perLayer.push_back(
            op.getLayerInit(layer)[state - shape.yielded.begin() - 1]);
    initial.push_back(
        stackLayers(emit, perLayer, sizes, hiddenSizes, elementType));
    others.push_back(emit.empty(sizes, elementType));
  }
  Type yType =
      cast<ShapedType>(initial[shape.yielded[0]].getType()).getElementType();
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seq);
  Value counts;
  if (Value lengths = op.getLengths())
    counts = activeRowCounts(b, loc, lengths, seq);
  MLIRContext *context = b.getContext();
  // Iterations (row, unit, layer); the buffers are indexed (row, layer, unit).
  AffineMap stateMap = AffineMap::get(
      3, 0,
      {b.getAffineDimExpr(0), b.getAffineDimExpr(2), b.getAffineDimExpr(1)},
      context);
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  // With lengths: the rows of diagonal s, and each of them written back.
  auto diagonalRows = [&](OpBuilder &b, Value s) -> Value {
    Value earliest = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, s, constant(b, layers)),
        constant(b, 0));
    return activeRows(b, loc, counts, earliest, batch);
  };
  auto diagonal = [&](OpBuilder &b, Location loc, Value s, ValueRange previous,
                      ValueRange outBuffers, Value y) {
    SmallVector<Value> out(outBuffers);
    // With lengths, rows [0, rows) of each [B, L, H] buffer.
    Value rows = counts ? diagonalRows(b, s) : Value();
    SmallVector<OpFoldResult> origin(3, b.getIndexAttr(0)),
        unitStrides(3, b.getIndexAttr(1)),
        rowSizes = {rows, sizes[1], sizes[2]};
    if (counts)
      for (Value &buffer : out)
        buffer = tensor::ExtractSliceOp::create(b, loc, buffer, origin,
                                                rowSizes, unitStrides);
    auto step = linalg::GenericOp::create(
        b, loc, ValueRange(out).getTypes(), ValueRange{}, out,
        SmallVector<AffineMap>(out.size(), stateMap),
        SmallVector<IteratorType>(3, IteratorType::parallel),
        [&](OpBuilder &nb, Location loc, ValueRange) {
          Value row = linalg::IndexOp::create(nb, loc, 0);
          Value unit = linalg::IndexOp::create(nb, loc, 1);
          Value layerIndex = linalg::IndexOp::create(nb, loc, 2);
          // What a layer without a step in this diagonal keeps.
          SmallVector<Value> carriedOver;
          for (Value buffer : previous)
            carriedOver.push_back(tensor::ExtractOp::create(
                nb, loc, buffer, ValueRange{row, layerIndex, unit}));
          emitLayerSwitch(
              nb, loc, layerIndex, layers, carriedOver,
              [&](OpBuilder &nb, int64_t layer) {
                return layerActive(nb, loc, s, steps, layer);
              },
              [&](OpBuilder &ib, int64_t layer) {
                auto layerConstant = [&](int64_t index) -> Value {
                  return arith::ConstantIndexOp::create(ib, loc, index);
                };
                CellRow input =
                    layer == 0 ? CellRow{op.getInput(), /*time=*/s, Value()}
                               : CellRow{previous[shape.yielded[0]], Value(),
                                         layerConstant(layer - 1)};
                SmallVector<CellRow> stateRows;
                for (int64_t state = 0; state < states; ++state)
                  stateRows.push_back({previous[shape.yielded[1 + state]],
                                       Value(), layerConstant(layer)});
                SmallVector<Value> values = emitCellIteration(
                    ib, loc, cells[layer], op.getCell(layer),
                    op.getLayerCaptures(layer), input, stateRows, row, unit);
                if (!counts)
                  return values;
                // A row past its length at t = s - l keeps its values.
                Value t =
                    arith::SubIOp::create(ib, loc, s, constant(ib, layer));
                Value stepping = arith::CmpIOp::create(
                    ib, loc, arith::CmpIPredicate::ult, row,
                    activeRows(ib, loc, counts, t, batch));
                for (auto [value, kept] : llvm::zip_equal(values, carriedOver))
                  value =
                      arith::SelectOp::create(ib, loc, stepping, value, kept);
                return values;
              });
        });
    markUnitStep(b, step, /*layered=*/true, hiddenSizes,
                 SmallVector<int64_t>(layers, 0), shape.config.getGates());
    SmallVector<Value> next(step.getResults());
    if (counts)
      for (auto [value, buffer] : llvm::zip_equal(next, outBuffers))
        value = tensor::InsertSliceOp::create(b, loc, value, buffer, origin,
                                              rowSizes, unitStrides);
    // The last layer's step s - (L - 1), if it had one, goes to y.
    next.push_back(insertLastLayerStep(b, loc, s, steps, layers,
                                       next[shape.yielded[0]], y, batch, hidden,
                                       counts));
    return next;
  };
  SmallVector<Value> loop = emitDoubleBufferedLoop(
      b, loc, diagonalCount(b, loc, steps, layers), initial, others,
      {emit.empty({seq, batch, b.getIndexAttr(hidden)}, yType)},
      [&](OpBuilder &nb, Location loc, Value s, ValueRange in, ValueRange out,
          ValueRange carried) {
        return diagonal(nb, loc, s, in, out, carried[0]);
      });
  // loop: the buffers, then y.
  SmallVector<Value> results = {loop.back()};
  for (int64_t layer = 0; layer < layers; ++layer)
    for (int64_t state = 0; state < states; ++state)
      results.push_back(layerPartOf(b, loc, loop[shape.yielded[1 + state]],
                                    batch, layer, hidden));
  return results;
}

/// recur.rnn_wavefront: the T+L-1 diagonal steps carry y, every layer's
/// state, and the y_t of every layer but the last, which the next layer
/// reads as its input row in the next diagonal. In diagonal s each layer l
/// with a step (t = s - l in [0, T)) runs its cell inlined, the last layer
/// first, so that layer l reads layer l-1's y_t before layer l-1 writes its
/// next one into the same buffer. When every cell is one unit step of one
/// shape (the GPU's), the fused form instead (fusedRNNWavefront).
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
    if (std::optional<SmallVector<UnitStepCell>> cells = unitStepLayers(op)) {
      replaceWithCasts(
          rewriter, op,
          fusedRNNWavefront(rewriter, loc, op, *cells, sizes[0], batch));
      return success();
    }
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
