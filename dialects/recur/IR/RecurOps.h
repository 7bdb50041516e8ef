//===- RecurOps.h - recur dialect operations --------------------*- C++ -*-===//

#ifndef RECUR_IR_RECUROPS_H
#define RECUR_IR_RECUROPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "recur/IR/RecurDialect.h"

#include "recur/IR/RecurEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "recur/IR/RecurAttrs.h.inc"

#include "recur/IR/RecurInterfaces.h.inc"

namespace mlir::recur {
/// Whether `weight`, read by an op that computes in the element type of
/// `computeType` (f32), is packed in pairs of k for bf16 products
/// (`recur.pack_panels ... pairs`): a rank-4 bf16 [P, K / 2, t, 2] tensor.
bool isPairPacked(Type weight, Type computeType);
} // namespace mlir::recur

#define GET_OP_CLASSES
#include "recur/IR/RecurOps.h.inc"

namespace mlir::recur {
/// The operand captured as `value`, if `value` is a capture argument of a
/// recurrence cell (a recur.rnn's or a recur.rnn_wavefront layer's); null
/// otherwise.
OpOperand *getCapturedOperand(Value value);

/// Whether `op` may run in an entry's weight prologue
/// (recur-outline-weight-prologue): it is pure and has no region, or is a
/// linalg.generic on tensors whose body reads nothing from outside it (a
/// weight scaled at bind time).
bool isPrologueOp(Operation *op);

/// Whether `value` is computed by prologue ops from the entry's weights
/// (`recur.weight` arguments) and constants alone: weight-only work, done
/// once per binding (a transpose, a gate interleaving or reordering, a
/// bf16 weight's extension, a folded scale).
bool isWeightOnly(Value value);

/// Erases the ops of `block` (its terminator aside) whose results nothing
/// reads and that have no side effects, last first, so that chains go too:
/// what a derivation built and did not need.
void eraseUnusedOps(Block &block);
} // namespace mlir::recur

#endif // RECUR_IR_RECUROPS_H
