//===- ElementwiseVectors.h - scalar linalg bodies run on vectors ---------===//
//
// What the CPU kernel emitters share to run the body of an elementwise
// linalg.generic on vectors of lanes: recur-vectorize-elementwise along a
// row, recur-vectorize-packed-matmuls on the accumulators of a GEMM tile
// (the fused LSTM cell).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_CPU_ELEMENTWISEVECTORS_H
#define RECUR_LIB_CODEGEN_CPU_ELEMENTWISEVECTORS_H

#include "../RowOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::recur {

/// (isElementwiseF32Body, what BodyVectorizer can run, is in ../RowOps.h.)

/// Clones scalar ops as the same ops on vectors of `width` lanes.
class BodyVectorizer {
public:
  BodyVectorizer(OpBuilder &b, Location loc, int64_t width)
      : b(b), loc(loc), width(width) {}

  VectorType vectorOf(Type element) const {
    return VectorType::get({width}, element);
  }

  /// `value` as a vector: mapped, or a scalar from outside the body (the
  /// same in every lane).
  Value vectorValue(IRMapping &mapping, Value value);

  /// `op` on vectors of its mapped operands; maps its results.
  Operation *vectorize(Operation *op, IRMapping &mapping);

  /// `op`'s body on vectors, but for `skipped` ops (a reduction's
  /// combiners); the block arguments (and any `linalg.index`) must be
  /// mapped.
  void cloneBody(linalg::GenericOp op, IRMapping &mapping,
                 ArrayRef<Operation *> skipped = {});

private:
  OpBuilder &b;
  Location loc;
  int64_t width;
};

/// The op after `op` that may touch memory (ops without memory effects,
/// such as views, skipped), or null.
Operation *nextWithEffects(Operation *op);

/// `value` can be used before `op`: defined in another block or before it.
bool definedBefore(Value value, Operation *op);

/// `value` is defined before `op`, or is a subview of values that are (the
/// view can be moved there: moveCopyTargetBefore).
bool availableBefore(Value value, Operation *op);

/// A copy that follows `op` (past ops without memory effects, such as the
/// view it copies into) of one of `outputs`, buffers `op` writes, into a
/// buffer of its own (an allocation none of `operands` is a view of): the
/// LSTM step's h copied into y[t]. The kernel that replaces `op`, built
/// before `kernelPosition`, writes the target too. Sets `copied` to the
/// copy's source.
linalg::CopyOp matchCopiedOutput(Operation *op, ValueRange outputs,
                                 ValueRange operands, Operation *kernelPosition,
                                 Value &copied);

/// Makes the target of `copy` (the view it writes to) available before
/// `op`, where a kernel replacing `op` writes it.
void moveCopyTargetBefore(RewriterBase &rewriter, linalg::CopyOp copy,
                          Operation *op);

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_CPU_ELEMENTWISEVECTORS_H
