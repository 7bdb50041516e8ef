//===- CollapseParallelLoops.cpp - one dimension per parallel loop nest ---===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_COLLAPSEPARALLELLOOPS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
struct CollapseParallelLoopsPass
    : mlir::recur::impl::CollapseParallelLoopsBase<CollapseParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1 && !loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : outermost) {
      std::vector<unsigned> allDims(loop.getNumLoops());
      std::iota(allDims.begin(), allDims.end(), 0);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {allDims});
    }
  }
};
} // namespace
