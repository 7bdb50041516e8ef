//===- PersistentRegisterBudget.cpp - .maxnreg for persistent kernels -----===//

#include "recur/Codegen/Passes.h"
#include "recur/runtime.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUPERSISTENTREGISTERBUDGET
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
struct GpuPersistentRegisterBudgetPass
    : mlir::recur::impl::GpuPersistentRegisterBudgetBase<
          GpuPersistentRegisterBudgetPass> {
  using Base::Base;

  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      if (kernel.isKernel() &&
          kernel.getName().starts_with(RECUR_PERSISTENT_KERNEL_PREFIX))
        kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                        b.getI32IntegerAttr(maxRegisters));
    });
  }
};
} // namespace
