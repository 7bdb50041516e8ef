//===- HoistConditionalBuffers.cpp - allocations out of a loop's scf.if ---===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_HOISTCONDITIONALBUFFERS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
struct HoistConditionalBuffersPass
    : mlir::recur::impl::HoistConditionalBuffersBase<
          HoistConditionalBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocations;
    getOperation().walk(
        [&](memref::AllocOp alloc) { allocations.push_back(alloc); });
    for (memref::AllocOp alloc : allocations) {
      // Out of every scf.if it is nested in, up to the loop around them.
      while (auto condition = dyn_cast<scf::IfOp>(alloc->getParentOp())) {
        if (!condition->getParentOfType<LoopLikeOpInterface>() ||
            llvm::any_of(alloc->getOperands(), [&](Value size) {
              return condition->isAncestor(
                  size.getParentBlock()->getParentOp());
            }))
          break;
        alloc->moveBefore(condition);
      }
    }
  }
};
} // namespace
