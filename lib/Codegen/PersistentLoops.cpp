//===- PersistentLoops.cpp - serial loops that can run on a team ----------===//

#include "PersistentLoops.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
bool runsOnEveryWorker(Operation *op,
                       function_ref<bool(scf::ParallelOp)> canShareOut,
                       bool &hasParallelLoop) {
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    hasParallelLoop = true;
    return canShareOut(loop);
  }
  if (isa<scf::ForOp, scf::IfOp>(op)) {
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (!runsOnEveryWorker(&nested, canShareOut, hasParallelLoop))
          return false;
    return true;
  }
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}
} // namespace

bool mlir::recur::isPersistentLoop(
    scf::ForOp loop, function_ref<bool(scf::ParallelOp)> canShareOut) {
  // Its results would be defined inside the team's region.
  if (loop.getNumResults() != 0)
    return false;
  bool hasParallelLoop = false;
  for (Operation &op : loop.getBody()->getOperations())
    if (!runsOnEveryWorker(&op, canShareOut, hasParallelLoop))
      return false;
  return hasParallelLoop;
}

SmallVector<scf::ParallelOp>
mlir::recur::outermostParallelLoops(scf::ForOp loop) {
  SmallVector<scf::ParallelOp> parallelLoops;
  loop.getBody()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp parallel) {
    parallelLoops.push_back(parallel);
    return WalkResult::skip();
  });
  return parallelLoops;
}

SmallVector<scf::ForOp> mlir::recur::findPersistentLoops(
    Operation *root, function_ref<bool(scf::ParallelOp)> canShareOut,
    function_ref<bool(Operation *)> skip) {
  SmallVector<scf::ForOp> loops;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp>(op) || skip(op))
      return WalkResult::skip();
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop || !isPersistentLoop(loop, canShareOut))
      return WalkResult::advance();
    loops.push_back(loop);
    return WalkResult::skip(); // the outermost such loop
  });
  return loops;
}
