//===- AlignWorkgroupMemory.cpp - 16-byte aligned shared memory -----------===//
//
// gpu.launch has no way to state the alignment of its workgroup buffers, and
// their globals would be aligned to the element type only: 16-byte vector
// loads from shared memory need more.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUALIGNWORKGROUPMEMORY
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

struct GpuAlignWorkgroupMemoryPass
    : mlir::recur::impl::GpuAlignWorkgroupMemoryBase<
          GpuAlignWorkgroupMemoryPass> {
  void runOnOperation() override {
    StringRef alignName = LLVM::LLVMDialect::getAlignAttrName();
    Builder builder(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i)
        if (!func.getWorkgroupAttributionAttr(i, alignName))
          func.setWorkgroupAttributionAttr(
              i, alignName,
              builder.getI64IntegerAttr(recur::kWorkgroupAlignment));
    });
  }
};

} // namespace
