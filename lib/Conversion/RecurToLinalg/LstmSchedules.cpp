//===- LstmSchedules.cpp - the LSTM cell and its step schedules -----------===//
//
// Shared by Recurrences.cpp and Wavefront.cpp (LstmSchedules.h).
//
//===----------------------------------------------------------------------===//

#include "LstmSchedules.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace mlir::recur::to_linalg {

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

Value initialState(Emitter &emit, Value initial, OpFoldResult batch,
                   int64_t hidden, Type elementType) {
  if (initial)
    return initial;
  return emit.filled({batch, emit.b.getIndexAttr(hidden)}, elementType, 0.0);
}

SmallVector<Value> separateStep(OpBuilder &b, Location loc, Value gates,
                                Value wHh, Value h, Value c, OpFoldResult batch,
                                int64_t hidden, Value hOut) {
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

void markUnitStep(OpBuilder &b, linalg::GenericOp step, bool layered,
                  ArrayRef<int64_t> hidden, ArrayRef<int64_t> gateTiles,
                  int64_t gates) {
  step->setAttr(
      RecurDialect::kUnitStepAttrName,
      UnitStepAttr::get(b.getContext(), /*batch=*/0, /*unit=*/1,
                        layered ? std::optional<int64_t>(2) : std::nullopt,
                        hidden, gateTiles, gates));
}

SmallVector<Value> emitDoubleBufferedLoop(OpBuilder &b, Location loc,
                                          Value count, ValueRange initial,
                                          ValueRange others, ValueRange carried,
                                          DoubleBufferedStepFn step) {
  size_t buffered = initial.size();
  assert(others.size() == buffered && "a second buffer for each value");
  SmallVector<Value> inits(initial);
  llvm::append_range(inits, others);
  llvm::append_range(inits, carried);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0), count,
      arith::ConstantIndexOp::create(b, loc, 2), inits,
      [&](OpBuilder &nb, Location loc, Value t, ValueRange state) {
        ValueRange values = state.take_front(buffered);
        ValueRange other = state.slice(buffered, buffered);
        SmallVector<Value> first =
            step(nb, loc, t, values, other, state.drop_front(2 * buffered));
        Value second = arith::AddIOp::create(nb, loc, t, one);
        Value hasSecond = arith::CmpIOp::create(
            nb, loc, arith::CmpIPredicate::ult, second, count);
        ValueRange written = ArrayRef(first).take_front(buffered);
        auto branch = scf::IfOp::create(
            nb, loc, hasSecond,
            [&](OpBuilder &tb, Location loc) {
              scf::YieldOp::create(tb, loc,
                                   step(tb, loc, second, written, values,
                                        ArrayRef(first).drop_front(buffered)));
            },
            [&](OpBuilder &eb, Location loc) {
              SmallVector<Value> next = first;
              for (size_t index = 0; index < buffered; ++index)
                next[index] =
                    linalg::CopyOp::create(eb, loc, first[index], values[index])
                        .getResult(0);
              scf::YieldOp::create(eb, loc, next);
            });
        SmallVector<Value> next(branch.getResults().take_front(buffered));
        llvm::append_range(next, written);
        llvm::append_range(next, branch.getResults().drop_front(buffered));
        scf::YieldOp::create(nb, loc, next);
      });
  SmallVector<Value> results(loop.getResults().take_front(buffered));
  llvm::append_range(results, loop.getResults().drop_front(2 * buffered));
  return results;
}

} // namespace mlir::recur::to_linalg
