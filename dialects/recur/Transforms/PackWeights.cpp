//===- PackWeights.cpp - GEMM weights in register-tile panels -------------===//
//
// recur.linear(x, w, b) -> recur.linear(x, recur.pack_panels(w), b) where w
// is a model weight, so that recur-outline-weight-prologue packs it once per
// weight binding.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::recur {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

bool isModelWeight(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return false;
  auto function =
      dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
  return function && argument.getOwner()->isEntryBlock() &&
         function.getArgAttr(argument.getArgNumber(),
                             RecurDialect::kWeightAttrName);
}

struct PackWeightsPass : mlir::recur::impl::PackWeightsBase<PackWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (tile <= 0)
      return;
    // One packed copy per weight, however many ops read it.
    llvm::DenseMap<Value, Value> packed;
    auto pack = [&](OpOperand &weight) {
      auto type = dyn_cast<RankedTensorType>(weight.get().getType());
      if (!type || type.getRank() != 2 || !isModelWeight(weight.get()))
        return;
      Value &panels = packed[weight.get()];
      if (!panels) {
        auto argument = cast<BlockArgument>(weight.get());
        OpBuilder builder = OpBuilder::atBlockBegin(argument.getOwner());
        panels = PackPanelsOp::create(builder, argument.getLoc(), argument,
                                      tile);
      }
      weight.assign(panels);
    };
    getOperation()->walk([&](Operation *op) {
      if (auto linear = dyn_cast<LinearOp>(op))
        pack(linear.getWeightMutable());
      // The separate schedule's recurrent GEMM is a GEMM like any other.
      if (auto recurrence = dyn_cast<LSTMRecurrenceOp>(op))
        if (recurrence.getCell() == CellSchedule::separate &&
            !recurrence.getGateTile())
          pack(recurrence.getWHhMutable());
    });
  }
};

} // namespace
