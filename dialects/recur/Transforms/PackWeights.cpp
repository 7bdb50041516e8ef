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
    // One packed copy per weight, however many projections read it.
    llvm::DenseMap<Value, Value> packed;
    getOperation()->walk([&](LinearOp op) {
      Value weight = op.getWeight();
      auto type = dyn_cast<RankedTensorType>(weight.getType());
      if (!type || type.getRank() != 2 || !isModelWeight(weight))
        return;
      Value &panels = packed[weight];
      if (!panels) {
        auto argument = cast<BlockArgument>(weight);
        OpBuilder builder = OpBuilder::atBlockBegin(argument.getOwner());
        panels = PackPanelsOp::create(builder, op.getLoc(), weight, tile);
      }
      op.getWeightMutable().assign(panels);
    });
  }
};

} // namespace
