//===- PersistentLoops.cpp - serial loops that can run on a team ----------===//

#include "PersistentLoops.h"
#include "BufferViews.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// Whether nothing in `loop` may write the buffer `memref` is a view of:
/// an allocation of its own, which no write in the loop reaches. A write to
/// another allocation or to a function's argument cannot; one to a buffer
/// of unknown origin (a select's, a loop's) might. A block's barrier (a
/// stationary step staging its weights) orders accesses, it writes nothing.
bool readOnlyIn(Value memref, scf::ForOp loop) {
  Value root = recur::rootBuffer(memref);
  if (!root.getDefiningOp<memref::AllocOp>())
    return false;
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (isa<gpu::BarrierOp>(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &instance : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(instance.getEffect()))
        continue;
      Value written = instance.getValue()
                          ? recur::rootBuffer(instance.getValue())
                          : Value();
      auto argument = dyn_cast_or_null<BlockArgument>(written);
      bool functionArgument =
          argument &&
          isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
      if (!written || written == root ||
          (!written.getDefiningOp<memref::AllocOp>() && !functionArgument))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Why `op` cannot run on every worker of a team ("" if it can); notes
/// whether it is or holds a parallel loop. Every worker may read a scalar
/// that nothing in `loop` writes (a packed batch's active row count).
std::string whyNotOnEveryWorker(Operation *op, scf::ForOp loop,
                                function_ref<bool(scf::ParallelOp)> canShareOut,
                                bool &hasParallelLoop) {
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    hasParallelLoop = true;
    return canShareOut(loop) ? "" : "a parallel loop cannot be shared out";
  }
  if (isa<scf::ForOp, scf::IfOp>(op)) {
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (std::string why = whyNotOnEveryWorker(&nested, loop, canShareOut,
                                                  hasParallelLoop);
            !why.empty())
          return why;
    return "";
  }
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
    return "";
  if (auto load = dyn_cast<memref::LoadOp>(op);
      load && readOnlyIn(load.getMemRef(), loop))
    return "";
  return ("the step runs '" + op->getName().getStringRef() +
          "' outside its parallel loops" +
          (isa<memref::AllocOp, memref::DeallocOp>(op)
               ? " (a buffer allocated per step)"
               : ""))
      .str();
}
} // namespace

std::string
mlir::recur::whyNotPersistent(scf::ForOp loop,
                              function_ref<bool(scf::ParallelOp)> canShareOut) {
  // Its results would be defined inside the team's region.
  if (loop.getNumResults() != 0)
    return "the loop has results";
  bool hasParallelLoop = false;
  std::string why;
  for (Operation &op : loop.getBody()->getOperations()) {
    why = whyNotOnEveryWorker(&op, loop, canShareOut, hasParallelLoop);
    if (!why.empty())
      break;
  }
  if (why.empty() && !hasParallelLoop)
    return "it holds no parallel loop";
  return why;
}

bool mlir::recur::isPersistentLoop(
    scf::ForOp loop, function_ref<bool(scf::ParallelOp)> canShareOut) {
  return whyNotPersistent(loop, canShareOut).empty();
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
    function_ref<bool(Operation *)> skip,
    function_ref<void(scf::ForOp, StringRef)> refused) {
  SmallVector<scf::ForOp> loops;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp>(op) || skip(op))
      return WalkResult::skip();
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return WalkResult::advance();
    std::string why = whyNotPersistent(loop, canShareOut);
    if (!why.empty()) {
      // A time loop (it holds parallel loops) that runs step by step.
      if (refused && !outermostParallelLoops(loop).empty())
        refused(loop, why);
      return WalkResult::advance();
    }
    loops.push_back(loop);
    return WalkResult::skip(); // the outermost such loop
  });
  return loops;
}
