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
    // One packed copy per weight and panel width, however many ops read it.
    llvm::DenseMap<std::pair<Value, int64_t>, Value> packed;
    // `weight` packed in panels of `panelRows`, right after its definition.
    auto pack = [&](OpOperand &weight, int64_t panelRows) {
      Value &panels = packed[{weight.get(), panelRows}];
      if (!panels) {
        OpBuilder builder(&getContext());
        builder.setInsertionPointAfterValue(weight.get());
        panels = PackPanelsOp::create(builder, weight.get().getLoc(),
                                      weight.get(), panelRows);
      }
      weight.assign(panels);
    };
    auto isMatrix = [](Value value) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      return type && type.getRank() == 2;
    };
    getOperation()->walk([&](Operation *op) {
      if (auto linear = dyn_cast<LinearOp>(op)) {
        if (tile > 0 && isMatrix(linear.getWeight()) &&
            isModelWeight(linear.getWeight()))
          pack(linear.getWeightMutable(), tile);
        return;
      }
      auto recurrence = dyn_cast<LSTMRecurrenceOp>(op);
      // A projected step's recurrent GEMM has P columns, not H: unpacked.
      if (!recurrence || !isMatrix(recurrence.getWHh()) || recurrence.getWHr())
        return;
      // The separate schedule's recurrent GEMM is a GEMM like any other.
      if (tile > 0 && recurrence.getCell() == CellSchedule::separate &&
          isModelWeight(recurrence.getWHh()))
        pack(recurrence.getWHhMutable(), tile);
      // The fused step's tile: the four gates of K units, one panel.
      auto interleaved = recurrence.getWHh().getDefiningOp<InterleaveGatesOp>();
      if (gateTile > 0 && recurrence.getCell() == CellSchedule::fused &&
          recurrence.getGateTile() == gateTile && interleaved &&
          isModelWeight(interleaved.getInput()))
        pack(recurrence.getWHhMutable(), 4 * gateTile);
    });
  }
};

} // namespace
