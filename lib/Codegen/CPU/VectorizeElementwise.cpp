//===- VectorizeElementwise.cpp - elementwise generics on vectors ---------===//
//
// out[i..., j] = f(in[i..., j], ...) on buffers, as
//   scf.parallel (i...) { scf.for j step W { f on vector<W> } ; masked tail }
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

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

class ElementwiseEmitter {
public:
  ElementwiseEmitter(RewriterBase &rewriter, linalg::GenericOp op,
                     int64_t vectorWidth)
      : b(rewriter), loc(op->getLoc()), op(op), vectorWidth(vectorWidth) {}

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
    scf::ParallelOp::create(
        b, loc, lower, upper, steps,
        [&](OpBuilder &nested, Location, ValueRange leading) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          inner(leading);
        });
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// Vectors at [leading..., j] for j from `begin` to `end`; masked past the
  /// end unless `inBounds`.
  void vectorLoop(ValueRange leading, Value begin, Value end, bool inBounds) {
    scf::ForOp::create(b, loc, begin, end, index(vectorWidth), ValueRange{},
                       [&](OpBuilder &nested, Location, Value j, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nested.getInsertionBlock(),
                                             nested.getInsertionPoint());
                         SmallVector<Value> indices(leading);
                         indices.push_back(j);
                         body(indices, inBounds);
                         scf::YieldOp::create(b, loc);
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
    }
  }

  RewriterBase &b;
  Location loc;
  linalg::GenericOp op;
  int64_t vectorWidth;
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
      rewriter.setInsertionPoint(op);
      ElementwiseEmitter(rewriter, op, vectorWidth).emit();
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
