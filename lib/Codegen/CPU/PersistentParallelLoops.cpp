//===- PersistentParallelLoops.cpp - one OpenMP region per serial loop ----===//
//
// A time loop whose steps are parallel loops forks and joins the thread team
// once per step when each scf.parallel becomes its own omp.parallel. Here the
// team is started once around the serial loop: every thread runs the loop,
// and each parallel loop becomes a worksharing loop whose implicit barrier
// is the step's only synchronization.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::recur {
#define GEN_PASS_DEF_PERSISTENTPARALLELLOOPS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// Whether a parallel loop can be shared out by a worksharing loop as it
/// stands: no reductions, and no stack allocation in its body (upstream's
/// conversion scopes those per iteration; these kernels have none).
bool isWorksharable(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  return !loop.getBody()
              ->walk([](memref::AllocaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// Whether every thread of the team may run `op` itself: it computes values
/// only (each thread gets the same ones), or it is a parallel loop (shared
/// out), or structured control flow around such ops. Anything that reads or
/// writes memory outside a parallel loop would race with the other threads'
/// worksharing loops, which start without a barrier.
bool runsOnEveryThread(Operation *op, bool &hasParallelLoop) {
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    hasParallelLoop = true;
    return isWorksharable(loop);
  }
  if (isa<scf::ForOp, scf::IfOp>(op)) {
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (!runsOnEveryThread(&nested, hasParallelLoop))
          return false;
    return true;
  }
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// Whether `loop` is worth a region of its own: it holds a parallel loop, and
/// each of its ops may run on every thread. Its results would be defined
/// inside the region, so it may have none.
bool isPersistent(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  bool hasParallelLoop = false;
  for (Operation &op : loop.getBody()->getOperations())
    if (!runsOnEveryThread(&op, hasParallelLoop))
      return false;
  return hasParallelLoop;
}

/// Replaces `loop` by an omp.wsloop over the same iteration space. Its
/// default schedule is static: each thread gets the same contiguous share of
/// the iterations at every step, so its slice of a weight stays in its cache.
void shareOut(RewriterBase &rewriter, scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto wsloop = omp::WsloopOp::create(rewriter, loc);
  rewriter.createBlock(&wsloop.getRegion());
  auto nest = omp::LoopNestOp::create(
      rewriter, loc, loop.getNumLoops(), loop.getLowerBound(),
      loop.getUpperBound(), loop.getStep(), /*loop_inclusive=*/false,
      /*tile_sizes=*/nullptr);
  rewriter.inlineRegionBefore(loop.getRegion(), nest.getRegion(),
                              nest.getRegion().begin());
  Block &body = nest.getRegion().front();
  rewriter.setInsertionPoint(body.getTerminator());
  rewriter.replaceOpWithNewOp<omp::YieldOp>(body.getTerminator());
  rewriter.eraseOp(loop);
}

/// Runs `loop` on every thread of one team: its parallel loops (outermost
/// ones; nested ones stay inside them) become worksharing loops.
void makePersistent(RewriterBase &rewriter, scf::ForOp loop) {
  SmallVector<scf::ParallelOp> parallelLoops;
  loop.getBody()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp parallel) {
    parallelLoops.push_back(parallel);
    return WalkResult::skip();
  });
  for (scf::ParallelOp parallel : parallelLoops)
    shareOut(rewriter, parallel);

  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto team = omp::ParallelOp::create(rewriter, loc);
  Block *block = rewriter.createBlock(&team.getRegion());
  omp::TerminatorOp::create(rewriter, loc);
  rewriter.moveOpBefore(loop, block->getTerminator());
}

struct PersistentParallelLoopsPass
    : mlir::recur::impl::PersistentParallelLoopsBase<
          PersistentParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp, omp::ParallelOp>(op))
        return WalkResult::skip(); // already one region
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop || !isPersistent(loop))
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip(); // the outermost such loop
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      makePersistent(rewriter, loop);
  }
};

} // namespace
