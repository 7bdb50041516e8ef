//===- VectorizeElementwise.cpp - elementwise generics on vectors ---------===//
//
// out[i..., j] = f(in[i..., j], ...) on buffers, as
//   scf.parallel (i...) { scf.for j step W { f on vector<W> } ; masked tail }
//
//===----------------------------------------------------------------------===//

#include "LoopBuilders.h"
#include "recur/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::recur {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// Every operand an f32 buffer of one shape, read and written at the loop
/// index; a body of elementwise arith/math ops on f32 (and i1) scalars.
bool isVectorizableElementwise(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() != 0 ||
      op.getNumLoops() == 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  ArrayRef<int64_t> shape;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.getElementType().isF32() || !type.isLastDimUnitStride())
      return false;
    if (shape.empty())
      shape = type.getShape();
    else if (type.getShape() != shape)
      return false;
  }
  for (Operation &nested : op.getRegion().front().without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(nested.getDialect()) ||
        nested.getNumRegions() != 0)
      return false;
    if (isa<arith::ConstantOp>(nested))
      continue;
    if (!nested.hasTrait<OpTrait::Elementwise>())
      return false;
    for (Type type :
         llvm::concat<Type>(nested.getOperandTypes(), nested.getResultTypes()))
      if (!type.isF32() && !type.isInteger(1))
        return false;
  }
  return true;
}

/// The allocation `value` is a view of, or null.
memref::AllocOp rootAllocation(Value value) {
  while (auto view = value.getDefiningOp<memref::SubViewOp>())
    value = view.getSource();
  return value.getDefiningOp<memref::AllocOp>();
}

/// A copy of one of `op`'s outputs that follows it (past ops without memory
/// effects, such as the view it copies into), into
/// a buffer of its own (an allocation none of `op`'s operands is a view of):
/// the LSTM step's h copied into y[t]. The vector loop writes it too.
linalg::CopyOp matchCopiedOutput(linalg::GenericOp op, Value &output) {
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0)
    next = next->getNextNode();
  auto copy = dyn_cast_or_null<linalg::CopyOp>(next);
  if (!copy)
    return {};
  Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
  auto targetType = dyn_cast<MemRefType>(target.getType());
  memref::AllocOp targetRoot = rootAllocation(target);
  if (!llvm::is_contained(op.getDpsInits(), source) || !targetType ||
      targetType.getShape() != cast<MemRefType>(source.getType()).getShape() ||
      !targetType.isLastDimUnitStride() || !targetRoot ||
      llvm::any_of(op->getOperands(), [&](Value operand) {
        return rootAllocation(operand) == targetRoot;
      }))
    return {};
  // The target, or the view that makes it, can be built before `op`.
  auto availableBefore = [&](Value value) {
    Operation *definition = value.getDefiningOp();
    return !definition || definition->getBlock() != op->getBlock() ||
           definition->isBeforeInBlock(op);
  };
  if (!availableBefore(target)) {
    auto view = target.getDefiningOp<memref::SubViewOp>();
    if (!view || !llvm::all_of(view->getOperands(), availableBefore))
      return {};
  }
  output = source;
  return copy;
}

class ElementwiseEmitter {
public:
  ElementwiseEmitter(RewriterBase &rewriter, linalg::GenericOp op,
                     int64_t vectorWidth, Value copied = {},
                     Value copyTarget = {})
      : b(rewriter), loc(op->getLoc()), op(op), vectorWidth(vectorWidth),
        copied(copied), copyTarget(copyTarget) {}

  void emit() {
    Value first = op->getOperand(0);
    unsigned rank = cast<MemRefType>(first.getType()).getRank();
    SmallVector<Value> lower, upper, steps;
    for (unsigned dim = 0; dim + 1 < rank; ++dim) {
      lower.push_back(index(0));
      upper.push_back(memref::DimOp::create(b, loc, first, dim));
      steps.push_back(index(1));
    }
    Value size = memref::DimOp::create(b, loc, first, rank - 1);
    auto inner = [&](ValueRange leading) {
      Value full = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, size, index(vectorWidth)),
          index(vectorWidth));
      vectorLoop(leading, index(0), full, /*inBounds=*/true);
      vectorLoop(leading, full, size, /*inBounds=*/false);
    };
    if (lower.empty()) {
      inner({});
      return;
    }
    buildParallel(b, loc, lower, upper, steps, inner);
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// Vectors at [leading..., j] for j from `begin` to `end`; masked past the
  /// end unless `inBounds`.
  void vectorLoop(ValueRange leading, Value begin, Value end, bool inBounds) {
    buildFor(b, loc, begin, end, index(vectorWidth), [&](Value j) {
      SmallVector<Value> indices(leading);
      indices.push_back(j);
      body(indices, inBounds);
    });
  }

  VectorType vectorOf(Type element) {
    return VectorType::get({vectorWidth}, element);
  }

  void body(ArrayRef<Value> indices, bool inBounds) {
    Block &block = op.getRegion().front();
    IRMapping mapping;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                           b.getF32FloatAttr(0.0f));
    for (OpOperand *input : op.getDpsInputOperands())
      mapping.map(op.getMatchingBlockArgument(input),
                  vector::TransferReadOp::create(
                      b, loc, vectorOf(b.getF32Type()), input->get(), indices,
                      zero, ArrayRef<bool>{inBounds}));
    // An output's block argument is its current value (c of the cell).
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument argument = op.getMatchingBlockArgument(&init);
      if (!argument.use_empty())
        mapping.map(argument, vector::TransferReadOp::create(
                                  b, loc, vectorOf(b.getF32Type()), init.get(),
                                  indices, zero, ArrayRef<bool>{inBounds}));
    }
    for (Operation &nested : block.without_terminator()) {
      if (auto constant = dyn_cast<arith::ConstantOp>(nested)) {
        auto type = vectorOf(constant.getType());
        mapping.map(constant.getResult(),
                    arith::ConstantOp::create(
                        b, loc, type,
                        DenseElementsAttr::get(
                            type, cast<TypedAttr>(constant.getValue()))));
        continue;
      }
      SmallVector<Value> operands;
      for (Value operand : nested.getOperands()) {
        Value mapped = mapping.lookupOrNull(operand);
        // A scalar from outside the body is the same in every lane.
        if (!mapped)
          mapped = vector::BroadcastOp::create(
              b, loc, vectorOf(operand.getType()), operand);
        operands.push_back(mapped);
      }
      SmallVector<Type> types;
      for (Type type : nested.getResultTypes())
        types.push_back(vectorOf(type));
      OperationState state(loc, nested.getName(), operands, types,
                           nested.getAttrs());
      Operation *vectorized = b.create(state);
      mapping.map(nested.getResults(), vectorized->getResults());
    }
    auto yield = cast<linalg::YieldOp>(block.getTerminator());
    for (auto [value, init] :
         llvm::zip(yield.getOperands(), op.getDpsInits())) {
      Value mapped = mapping.lookupOrNull(value);
      if (!mapped)
        mapped = vector::BroadcastOp::create(b, loc, vectorOf(value.getType()),
                                             value);
      vector::TransferWriteOp::create(b, loc, mapped, init, indices,
                                      ArrayRef<bool>{inBounds});
      if (init == copied)
        vector::TransferWriteOp::create(b, loc, mapped, copyTarget, indices,
                                        ArrayRef<bool>{inBounds});
    }
  }

  RewriterBase &b;
  Location loc;
  linalg::GenericOp op;
  int64_t vectorWidth;
  /// An output that a following copy (then erased) also writes to
  /// `copyTarget`.
  Value copied, copyTarget;
};

struct VectorizeElementwisePass
    : mlir::recur::impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth <= 0) {
      getOperation()->emitError(
          "recur-vectorize-elementwise needs a positive vector-width");
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isVectorizableElementwise(op))
        generics.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      Value copied;
      linalg::CopyOp copy = matchCopiedOutput(op, copied);
      // The copy's target view must exist where the loop writes it.
      if (copy)
        if (Operation *view = copy.getOutputs()[0].getDefiningOp())
          if (view->getBlock() == op->getBlock() && op->isBeforeInBlock(view))
            rewriter.moveOpBefore(view, op);
      rewriter.setInsertionPoint(op);
      ElementwiseEmitter(rewriter, op, vectorWidth, copied,
                         copy ? copy.getOutputs()[0] : Value())
          .emit();
      rewriter.eraseOp(op);
      if (copy)
        rewriter.eraseOp(copy);
    }
  }
};

} // namespace
