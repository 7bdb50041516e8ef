//===- WorkgroupAttributions.cpp - shared memory declared by its kernels --===//

#include "recur/Codegen/Passes.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUWORKGROUPATTRIBUTIONS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
bool isWorkgroupBuffer(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

struct GpuWorkgroupAttributionsPass
    : mlir::recur::impl::GpuWorkgroupAttributionsBase<
          GpuWorkgroupAttributionsPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> buffers;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (isWorkgroupBuffer(alloc.getType()) &&
          !alloc->getParentOfType<gpu::LaunchOp>())
        buffers.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : buffers) {
      SmallVector<Operation *> deallocs;
      llvm::MapVector<gpu::LaunchOp, SmallVector<OpOperand *>> usesByKernel;
      for (OpOperand &use : alloc->getUses()) {
        if (isa<memref::DeallocOp>(use.getOwner())) {
          deallocs.push_back(use.getOwner());
          continue;
        }
        auto kernel = use.getOwner()->getParentOfType<gpu::LaunchOp>();
        if (!kernel) {
          use.getOwner()->emitOpError(
              "uses shared memory outside a gpu.launch");
          return signalPassFailure();
        }
        usesByKernel[kernel].push_back(&use);
      }
      for (auto &[kernel, uses] : usesByKernel) {
        BlockArgument attribution =
            kernel.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
        for (OpOperand *use : uses)
          rewriter.modifyOpInPlace(use->getOwner(),
                                   [&] { use->set(attribution); });
      }
      for (Operation *dealloc : deallocs)
        rewriter.eraseOp(dealloc);
      rewriter.eraseOp(alloc);
    }
  }
};
} // namespace
