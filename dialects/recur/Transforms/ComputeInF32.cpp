//===- ComputeInF32.cpp - bf16/f16 models computed in f32 -----------------===//
//
// The lowering computes in f32; a reduced-precision model keeps its
// interface (the tensors users bind and read) and computes inside in f32:
// extended at the entry, rounded at the return.
//
//===----------------------------------------------------------------------===//

#include "recur/Transforms/Passes.h"

namespace mlir::recur {
#define GEN_PASS_DEF_COMPUTEINF32
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

bool isReducedFloat(Type type) {
  auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return element && element.getWidth() < 32;
}

/// `type` with f32 elements.
Type widened(Type type) {
  Type f32 = Float32Type::get(type.getContext());
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(f32);
  return f32;
}

bool hasReducedFloatAttribute(Operation *op) {
  return llvm::any_of(op->getAttrs(), [](NamedAttribute attribute) {
    auto typed = dyn_cast<TypedAttr>(attribute.getValue());
    return typed && isReducedFloat(typed.getType());
  });
}

struct ComputeInF32Pass
    : mlir::recur::impl::ComputeInF32Base<ComputeInF32Pass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    Block &entry = function.getBody().front();
    WalkResult walk = function.walk([&](Operation *op) {
      if (!hasReducedFloatAttribute(op))
        return WalkResult::advance();
      op->emitError("has a reduced-precision float attribute; "
                    "recur-compute-in-f32 cannot convert it");
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    // Retype first, so that the extensions added next keep their types.
    function.walk([&](Operation *op) {
      // The entry's arguments are the interface.
      if (op == function || isa<func::ReturnOp>(op))
        return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            if (isReducedFloat(argument.getType()))
              argument.setType(widened(argument.getType()));
      for (OpResult result : op->getResults())
        if (isReducedFloat(result.getType()))
          result.setType(widened(result.getType()));
    });

    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    for (BlockArgument argument : entry.getArguments()) {
      if (!isReducedFloat(argument.getType()))
        continue;
      auto extended = arith::ExtFOp::create(
          builder, argument.getLoc(), widened(argument.getType()), argument);
      argument.replaceAllUsesExcept(extended, extended);
    }
    // Conversions the model made itself now convert f32 to f32.
    function.walk([&](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
          op->getOperand(0).getType() == op->getResult(0).getType()) {
        op->getResult(0).replaceAllUsesWith(op->getOperand(0));
        op->erase();
      }
    });
    function.walk([&](func::ReturnOp ret) {
      builder.setInsertionPoint(ret);
      for (auto [operand, type] :
           llvm::zip(ret->getOpOperands(), function.getResultTypes()))
        if (isReducedFloat(type))
          operand.set(arith::TruncFOp::create(builder, ret.getLoc(), type,
                                              operand.get()));
    });
  }
};

} // namespace
