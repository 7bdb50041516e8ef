//===- OpVerification.h - what the recur ops' verifiers share ---*- C++ -*-===//
//
// Each op has one signature function that checks its operand types and
// returns the symbolic shapes of its results (ShapeChecker.h). The verifier
// then checks the actual results against those shapes; builders and shape
// refinement turn them into result types. The ops are defined by family:
// RecurOps.cpp (embedding, linear, transpose, log_softmax, cross_entropy),
// RecurLstmOps.cpp (the LSTM forms and the weight layouts) and
// RecurTrainingOps.cpp (gradients, clipping, the update).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_OPVERIFICATION_H
#define RECUR_IR_OPVERIFICATION_H

#include "recur/IR/RecurOps.h"
#include "recur/IR/ShapeChecker.h"

#include <optional>
#include <string>

namespace mlir::recur::detail {

/// A float operand of an LSTM form (or its gradient) and the symbolic shape
/// it must have.
struct ExpectedOperand {
  StringRef name;
  Type type;
  SymbolicShape shape;
  bool isWeight;
};

/// "operand 'name'" / "result 'name'", the way messages name values.
std::string operandName(StringRef name);
std::string resultName(StringRef name);

/// Checks float `operands` against their shapes in order.
LogicalResult checkFloatOperands(ShapeChecker &checker,
                                 ArrayRef<ExpectedOperand> operands);

/// A checker whose errors are `op`'s.
ShapeChecker verifyingChecker(Operation *op);

/// Checks `op`'s results, named `names`, against the inferred `shapes`.
LogicalResult verifyResults(Operation *op, ShapeChecker &checker,
                            ArrayRef<StringRef> names,
                            ArrayRef<SymbolicShape> shapes);

/// Result types for `shapes`, or unranked placeholders (which fail
/// verification with the operand's message) when the operands are invalid.
SmallVector<Type> resultTypes(MLIRContext *context, ShapeChecker &checker,
                              FailureOr<SmallVector<SymbolicShape>> shapes,
                              unsigned numResults);

/// `value`'s type, or null for an absent optional operand.
Type typeOrNull(Value value);

/// A recurrence's optional `lengths`: a [B] tensor of integers, B that of
/// `input [T, B, I]`.
LogicalResult verifyLengths(Operation *op, Value lengths, Value input);

/// nn.LSTM's rules for the unit counts: a hidden size above zero, and a
/// projection (`projected`: w_hr's rows) that makes the hidden state smaller
/// but leaves it some units.
LogicalResult verifyUnitCounts(Operation *op, int64_t hidden,
                               std::optional<int64_t> projected = {});

/// A weight packed in pairs of k for bf16 products (recur.pack_panels ...
/// pairs): a static bf16 [P, K / 2, t, 2] read by an op that computes in
/// f32 (the element type of `computeType`).
LogicalResult checkPairPacked(ShapeChecker &checker, StringRef what,
                              Type weight, Type computeType);

/// recur.cross_entropy's signature: the per-token (or reduced) loss of
/// `logits` [..., C] at `targets` [...].
FailureOr<SmallVector<SymbolicShape>> checkCrossEntropy(ShapeChecker &checker,
                                                        Type logits,
                                                        Type targets,
                                                        Reduction reduction);

} // namespace mlir::recur::detail

#endif // RECUR_IR_OPVERIFICATION_H
