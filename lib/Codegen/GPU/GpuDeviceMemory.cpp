//===- GpuDeviceMemory.cpp - host buffers become device buffers -----------===//

#include "../BufferViews.h"
#include "recur/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUDEVICEMEMORY
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using mlir::recur::rootBuffer;

namespace {
/// Host-only scratch (e.g. the deallocation helpers' arrays) may stay on the
/// host; everything else is device memory after this pass.
bool isHostBuffer(Value memref) {
  Operation *def = rootBuffer(memref).getDefiningOp();
  return def && isa<memref::AllocaOp, memref::GetGlobalOp>(def);
}

struct GpuDeviceMemoryPass
    : mlir::recur::impl::GpuDeviceMemoryBase<GpuDeviceMemoryPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> hostOps;
    bool hostAccess = false;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        hostOps.push_back(op);
      Value accessed;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        accessed = load.getMemRef();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        accessed = store.getMemRef();
      else if (isa<memref::CopyOp, linalg::LinalgOp>(op))
        accessed = op->getOperand(0);
      if (accessed && !isHostBuffer(accessed)) {
        op->emitOpError("accesses device memory on the host; only loop nests "
                        "that became gpu.launch kernels may touch model "
                        "buffers");
        hostAccess = true;
      }
      return WalkResult::advance();
    });
    if (hostAccess)
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    for (Operation *op : hostOps) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto deviceAlloc = gpu::AllocOp::create(
            rewriter, alloc.getLoc(), alloc.getType(),
            /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange(),
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        rewriter.replaceOp(alloc, deviceAlloc.getMemref());
      } else {
        auto dealloc = cast<memref::DeallocOp>(op);
        rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
            dealloc, /*asyncToken=*/Type(), ValueRange(), dealloc.getMemref());
      }
    }
  }
};
} // namespace
