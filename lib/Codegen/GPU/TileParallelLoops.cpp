//===- TileParallelLoops.cpp - tile loops for blocks of threads -----------===//
//
// scf-parallel-loop-tiling tiles every innermost parallel loop. Loops
// already scheduled for blocks and threads (recur-gpu-stationary-weights)
// must keep their shape, so this variant leaves loops that carry a GPU
// mapping, and loops nested in them, alone.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUTILEPARALLELLOOPS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
bool isMapped(scf::ParallelOp loop) {
  for (Operation *op = loop; op; op = op->getParentOfType<scf::ParallelOp>())
    if (op->hasAttr(gpu::getMappingAttrName()))
      return true;
  return false;
}

struct GpuTileParallelLoopsPass
    : mlir::recur::impl::GpuTileParallelLoopsBase<GpuTileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> innermost;
    getOperation()->walk([&](scf::ParallelOp loop) {
      bool nested =
          loop.getBody()
              ->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (!nested && loop.getNumReductions() == 0 && !isMapped(loop))
        innermost.push_back(loop);
    });
    for (scf::ParallelOp loop : innermost)
      scf::tileParallelLoop(loop,
                            SmallVector<int64_t>(loop.getNumLoops(), blockSize),
                            /*noMinMaxBounds=*/true);
  }
};
} // namespace
