//===- UnitStepCells.h - a cell that is one fused unit step -----*- C++ -*-===//
//
// For a target without the CPU's register tile (the GPU's),
// recur-fuse-cell-step fuses a recur.rnn cell's recurrent product and tail
// into one linalg.generic marked recur.unit_step, whose results are the
// cell's y_t and new states. A wavefront of such cells runs each diagonal as
// one unit step over every layer's units (the conversion's fused
// recur.rnn_wavefront, as the LSTM's fused wavefront), with layer l's input
// product summed in the step. recur-wavefront and the conversion both ask
// this analysis whether a cell has that form.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_UNITSTEPCELLS_H
#define RECUR_IR_UNITSTEPCELLS_H

#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace mlir::recur {

/// Where a unit step's input operand reads its elements from in the cell:
/// x_t, a state, a capture (each directly or through a slice at static
/// offsets), or a column slice of x_t times a captured weight (layer l's
/// input product in a wavefront), element (b, j) = Σ_k x_t[b, k] w[o + j, k]
/// (+ bias[o + j]).
struct UnitStepRead {
  enum class Source { input, state, capture, inputProduct };
  Source source;
  int64_t index = 0;            // the state's or capture's position
  SmallVector<int64_t> offsets; // of the slice read (one per dimension)
  LinearOp product;             // inputProduct: its recur.linear
};

struct UnitStepCell {
  linalg::GenericOp step;
  UnitStepAttr config;
  /// The step's result that the cell yields as y_t, then as each state.
  SmallVector<unsigned> yielded;
  /// One per input operand of the step.
  SmallVector<UnitStepRead> reads;
  /// Whether x_t is read only as column slices [0, o] of width H, indexed
  /// (b, j): what a product of x_t with a weight can become.
  bool inputInColumns = true;

  int64_t hidden() const { return config.getHidden()[0]; }
};

/// The cell `cell` (x_t, `states` states, then captures) as one unit step:
/// a linalg.generic marked recur.unit_step (one layer, PyTorch's gate
/// layout) yielded as it is, whose body reads x_t and the states only by
/// tensor.extract, uses no value of the cell but its arguments and
/// constants, and writes its outputs without reading them; the cell's other
/// ops only slice what the step reads. Fails saying why in `whyNot`.
FailureOr<UnitStepCell> analyzeUnitStepCell(Block &cell, int64_t states,
                                            std::string &whyNot);

/// Whether two layers' unit-step cells run as one unit step: the same
/// hidden size, gates, yields and result types.
bool sameUnitStepShape(const UnitStepCell &a, const UnitStepCell &b);

} // namespace mlir::recur

#endif // RECUR_IR_UNITSTEPCELLS_H
