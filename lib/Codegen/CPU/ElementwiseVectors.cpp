//===- ElementwiseVectors.cpp - scalar linalg bodies run on vectors -------===//

#include "ElementwiseVectors.h"
#include "../BufferViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::recur;

Value BodyVectorizer::vectorValue(IRMapping &mapping, Value value) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  return vector::BroadcastOp::create(b, loc, vectorOf(value.getType()), value);
}

Operation *BodyVectorizer::vectorize(Operation *op, IRMapping &mapping) {
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(vectorValue(mapping, operand));
  SmallVector<Type> types;
  for (Type type : op->getResultTypes())
    types.push_back(vectorOf(type));
  OperationState state(loc, op->getName(), operands, types, op->getAttrs());
  Operation *vectorized = b.create(state);
  mapping.map(op->getResults(), vectorized->getResults());
  return vectorized;
}

void BodyVectorizer::cloneBody(linalg::GenericOp op, IRMapping &mapping,
                               ArrayRef<Operation *> skipped) {
  for (Operation &nested : op.getRegion().front().without_terminator()) {
    if (llvm::is_contained(skipped, &nested) || isa<linalg::IndexOp>(nested))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(nested)) {
      auto type = vectorOf(constant.getType());
      mapping.map(constant.getResult(),
                  arith::ConstantOp::create(
                      b, loc, type,
                      DenseElementsAttr::get(
                          type, cast<TypedAttr>(constant.getValue()))));
      continue;
    }
    vectorize(&nested, mapping);
  }
}

Operation *mlir::recur::nextWithEffects(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0)
    next = next->getNextNode();
  return next;
}

bool mlir::recur::definedBefore(Value value, Operation *op) {
  Operation *definition = value.getDefiningOp();
  return !definition || definition->getBlock() != op->getBlock() ||
         definition->isBeforeInBlock(op);
}

bool mlir::recur::availableBefore(Value value, Operation *op) {
  if (definedBefore(value, op))
    return true;
  auto view = value.getDefiningOp<memref::SubViewOp>();
  return view && llvm::all_of(view->getOperands(), [&](Value operand) {
           return definedBefore(operand, op);
         });
}

linalg::CopyOp mlir::recur::matchCopiedOutput(Operation *op, ValueRange outputs,
                                              ValueRange operands,
                                              Operation *kernelPosition,
                                              Value &copied) {
  auto copy = dyn_cast_or_null<linalg::CopyOp>(nextWithEffects(op));
  if (!copy)
    return {};
  Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
  auto targetType = dyn_cast<MemRefType>(target.getType());
  memref::AllocOp targetRoot = rootAllocation(target);
  if (!llvm::is_contained(outputs, source) || !targetType ||
      targetType.getShape() != cast<MemRefType>(source.getType()).getShape() ||
      !targetType.isLastDimUnitStride() || !targetRoot ||
      llvm::any_of(operands, [&](Value operand) {
        return rootAllocation(operand) == targetRoot;
      }))
    return {};
  // The target, or the view that makes it, can be built before the kernel.
  if (!availableBefore(target, kernelPosition))
    return {};
  copied = source;
  return copy;
}

void mlir::recur::moveCopyTargetBefore(RewriterBase &rewriter,
                                       linalg::CopyOp copy, Operation *op) {
  if (Operation *view = copy.getOutputs()[0].getDefiningOp())
    if (view->getBlock() == op->getBlock() && op->isBeforeInBlock(view))
      rewriter.moveOpBefore(view, op);
}
