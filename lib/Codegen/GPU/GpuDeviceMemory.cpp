//===- GpuDeviceMemory.cpp - host buffers become device buffers -----------===//

#include "../BufferViews.h"
#include "recur/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

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

/// A kernel that reads a constant global (bufferization turns small constant
/// tensors, such as the loss gradient's seed 1.0, into memref.get_global)
/// would be handed the global's host address, which the GPU cannot read.
/// The get_global, and the views between it and the kernel's use, are
/// cloned into the launch body instead: gpu-kernel-outlining then copies the
/// memref.global into the kernel's module, a device global. Host scratch
/// (memref.alloca) has no device copy, so reaching a kernel is an error.
LogicalResult moveGlobalsIntoKernels(func::FuncOp func, IRRewriter &rewriter) {
  bool failedAny = false;
  func.walk([&](gpu::LaunchOp launch) {
    SetVector<Value> usedAbove;
    getUsedValuesDefinedAbove(launch.getBody(), usedAbove);
    for (Value value : usedAbove) {
      if (!isa<MemRefType>(value.getType()) || !isHostBuffer(value))
        continue;
      Operation *root = rootBuffer(value).getDefiningOp();
      if (isa<memref::AllocaOp>(root)) {
        launch.emitOpError("reads host scratch, which the GPU cannot reach")
                .attachNote(root->getLoc())
            << "the scratch buffer";
        failedAny = true;
        continue;
      }
      // The chain from the global to the value, outermost first.
      SmallVector<Operation *> chain;
      for (Value view = value; view.getDefiningOp() != root;
           view =
               cast<ViewLikeOpInterface>(view.getDefiningOp()).getViewSource())
        chain.push_back(view.getDefiningOp());
      chain.push_back(root);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      IRMapping mapping;
      for (Operation *op : llvm::reverse(chain))
        rewriter.clone(*op, mapping);
      replaceAllUsesInRegionWith(value, mapping.lookup(value),
                                 launch.getBody());
    }
  });
  return failure(failedAny);
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
    if (failed(moveGlobalsIntoKernels(func, rewriter)))
      return signalPassFailure();
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
