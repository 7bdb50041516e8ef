//===- UpdateWeightsInPlace.cpp - drop results written in place -----------===//

#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::recur {
#define GEN_PASS_DEF_UPDATEWEIGHTSINPLACE
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {
struct UpdateWeightsInPlacePass
    : mlir::recur::impl::UpdateWeightsInPlaceBase<UpdateWeightsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    llvm::StringMap<BlockArgument> weights;
    for (BlockArgument arg : function.getArguments())
      if (auto name = function.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), RecurDialect::kWeightAttrName))
        weights[name.getValue()] = arg;
    llvm::BitVector dropped(function.getNumResults());
    SmallVector<func::ReturnOp> returns;
    function.walk([&](func::ReturnOp op) { returns.push_back(op); });
    for (unsigned index = 0; index < function.getNumResults(); ++index) {
      auto name = function.getResultAttrOfType<StringAttr>(
          index, RecurDialect::kUpdateAttrName);
      if (!name)
        continue;
      BlockArgument weight = weights.lookup(name.getValue());
      for (func::ReturnOp op : returns) {
        if (!weight || op.getOperand(index) != weight) {
          op.emitOpError() << "returns the update of weight '"
                           << name.getValue()
                           << "' in a buffer of its own: bufferization could "
                              "not write it over the weight in place";
          return signalPassFailure();
        }
      }
      dropped.set(index);
    }
    if (dropped.none())
      return;
    for (func::ReturnOp op : returns)
      op->eraseOperands(dropped);
    if (failed(function.eraseResults(dropped)))
      return signalPassFailure();
  }
};
} // namespace
