//===- PersistentParallelLoops.cpp - one OpenMP region per serial loop ----===//
//
// A time loop whose steps are parallel loops forks and joins the thread team
// once per step when each scf.parallel becomes its own omp.parallel. Here the
// team is started once around the serial loop: every thread runs the loop,
// and each parallel loop becomes a worksharing loop whose implicit barrier
// is the step's only synchronization.
//
//===----------------------------------------------------------------------===//

#include "../PersistentLoops.h"
#include "recur/Codegen/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

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
  for (scf::ParallelOp parallel : mlir::recur::outermostParallelLoops(loop))
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
    SmallVector<scf::ForOp> loops = mlir::recur::findPersistentLoops(
        getOperation(), isWorksharable,
        [](Operation *op) { return isa<omp::ParallelOp>(op); },
        [&](scf::ForOp loop, StringRef why) {
          mlir::recur::remarkMissed(
              loop, getArgument(),
              "this time loop starts and joins a thread team at "
              "every step, not one team for the whole loop",
              why);
        });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      makePersistent(rewriter, loop);
  }
};

} // namespace
