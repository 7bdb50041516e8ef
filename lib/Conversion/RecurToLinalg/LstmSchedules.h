//===- LstmSchedules.h - the LSTM cell and step schedules -------*- C++ -*-===//
//
// What the recurrence and the wavefront lowerings share: PyTorch's LSTM cell,
// the separate step (a [B, 4H] gate tensor, then the cell), the fused step's
// recur.unit_step mark (its gate sums are recur/Utils/GateSums.h's), and the
// double-buffered time loop.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CONVERSION_RECURTOLINALG_LSTMSCHEDULES_H
#define RECUR_LIB_CONVERSION_RECURTOLINALG_LSTMSCHEDULES_H

#include "LoweringUtils.h"

namespace mlir::recur::to_linalg {

/// The cell update of PyTorch's LSTM from the four gate pre-activations
/// (i, f, g, o) and the previous cell state: returns {h_t, c_t}.
std::pair<Value, Value> lstmCell(OpBuilder &b, Location loc, Value inGate,
                                 Value forgetGate, Value candidateGate,
                                 Value outGate, Value cPrev);

/// `initial` ([B, H]), or zero where the op has no initial state.
Value initialState(Emitter &emit, Value initial, OpFoldResult batch,
                   int64_t hidden, Type elementType);

/// What one layer's time loop gives, as recur.lstm's results are ordered.
struct LayerResults {
  Value y;  // the output sequence [T, B, R]
  Value hN; // the final hidden state [B, R]
  Value cN; // the final cell state [B, H]
  SmallVector<Value> values() const { return {y, hN, cN}; }
};

/// One step of a time loop: the step's time and the carried state in, the
/// next state out.
using StepFn = function_ref<SmallVector<Value>(OpBuilder &, Location, Value t,
                                               ValueRange state)>;

/// The separate step schedule: the [B, 4H] gate tensor `gates` (which
/// already holds everything but h·w_hhᵀ) gets the recurrent contraction,
/// then one elementwise pass applies the cell.
SmallVector<Value> separateStep(OpBuilder &b, Location loc, Value gates,
                                Value wHh, Value h, Value c, OpFoldResult batch,
                                int64_t hidden, Value hOut = {});

/// The rows of unit `unit`'s four gates (i, f, g, o) in a gate-stacked
/// weight: g * H + j in PyTorch's layout; interleaved with tile K,
/// (j / K) * 4K + g * K + j % K, i.e. j + 3K * (j / K) + g * K.
SmallVector<Value> gateRows(OpBuilder &b, Location loc, Value unit,
                            int64_t hidden, std::optional<int64_t> gateTile);

/// Marks `step` as a fused step over iterations (batch row, unit[, layer])
/// of `gates` gates per unit (#recur.unit_step).
void markUnitStep(OpBuilder &b, linalg::GenericOp step, bool layered,
                  ArrayRef<int64_t> hidden, ArrayRef<int64_t> gateTiles,
                  int64_t gates = 4);

/// One step of a double-buffered loop: step t reads `in` and writes every
/// element of `out` (one buffer per double-buffered value); returns {the
/// values written, the other carried values' next values}.
using DoubleBufferedStepFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value t, ValueRange in, ValueRange out,
    ValueRange carried)>;

/// `count` steps with the values `initial` (h; a cell's every state)
/// double-buffered, two per iteration: the first from them into `others`,
/// the second back, so that the loop-carried buffers stay in place for
/// bufferization and no step copies them before it starts (an odd count's
/// last step is followed by that copy instead). Returns {the double-buffered
/// values, the carried values}.
SmallVector<Value> emitDoubleBufferedLoop(OpBuilder &b, Location loc,
                                          Value count, ValueRange initial,
                                          ValueRange others, ValueRange carried,
                                          DoubleBufferedStepFn step);

} // namespace mlir::recur::to_linalg

#endif // RECUR_LIB_CONVERSION_RECURTOLINALG_LSTMSCHEDULES_H
