//===- LowerCopiesToLinalg.cpp - memref.copy as linalg.copy ---------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_LOWERCOPIESTOLINALG
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
struct LowerCopiesToLinalgPass
    : mlir::recur::impl::LowerCopiesToLinalgBase<LowerCopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      // A copy of a view onto the same view (bufferization's for a slice
      // updated in place and inserted back where it came from).
      Operation *source = copy.getSource().getDefiningOp(),
                *target = copy.getTarget().getDefiningOp();
      if (source && target && isa<memref::SubViewOp>(source) &&
          OperationEquivalence::isEquivalentTo(
              source, target, OperationEquivalence::IgnoreLocations)) {
        rewriter.eraseOp(copy);
        continue;
      }
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};
} // namespace
