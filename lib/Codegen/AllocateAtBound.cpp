//===- AllocateAtBound.cpp - a step's buffers allocated at their bound ----===//
//
// A packed batch's step runs on its active rows, n = min(count, B) of them:
// bufferization allocates its temporaries with n rows, at every step. Each
// becomes a view of n rows of a buffer of B rows, which buffer-loop-hoisting
// then moves out of the time loop, so that the loop allocates nothing and
// runs on one thread team (recur-persistent-parallel-loops). The view is
// identity-laid-out (memref.reinterpret_cast), as the allocation was, and
// placed right after its sizes, so that the kernels that write it see it
// defined before them.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_ALLOCATEATBOUND
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// The size of `memref`'s first dimension as the value it was made with,
/// through views that keep that dimension (an allocation, a reshape of one
/// or of such a view, a view of leading rows), or null.
Value leadingSize(Value memref) {
  Operation *definition = memref.getDefiningOp();
  if (auto alloc = dyn_cast_or_null<memref::AllocOp>(definition))
    return alloc.getType().isDynamicDim(0) ? alloc.getDynamicSizes()[0]
                                           : Value();
  if (auto view = dyn_cast_or_null<memref::ReinterpretCastOp>(definition))
    return dyn_cast<Value>(view.getMixedSizes()[0]);
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(definition))
    return collapse.getReassociationIndices()[0].size() == 1
               ? leadingSize(collapse.getSrc())
               : Value();
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(definition))
    return expand.getReassociationIndices()[0].size() == 1
               ? leadingSize(expand.getSrc())
               : Value();
  return {};
}

/// The loop-invariant bound of `size` in `loop`: b where size = minui(a, b)
/// (either operand), or the first dimension of a buffer made with such a
/// size, and b is defined outside the loop.
Value boundIn(Value size, scf::ForOp loop) {
  while (auto dim = size.getDefiningOp<memref::DimOp>()) {
    std::optional<int64_t> index = dim.getConstantIndex();
    Value leading = index == 0 ? leadingSize(dim.getSource()) : Value();
    if (!leading)
      return {};
    size = leading;
  }
  auto minimum = size.getDefiningOp<arith::MinUIOp>();
  if (!minimum)
    return {};
  for (Value operand : minimum->getOperands())
    if (loop.isDefinedOutsideOfLoop(operand))
      return operand;
  return {};
}

struct AllocateAtBoundPass
    : mlir::recur::impl::AllocateAtBoundBase<AllocateAtBoundPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocations;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (alloc->getParentOfType<scf::ForOp>())
        allocations.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : allocations)
      allocateAtBound(rewriter, alloc);
  }

  void allocateAtBound(IRRewriter &rewriter, memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    auto loop = alloc->getParentOfType<scf::ForOp>();
    // Only the rows dynamic: the strides stay static.
    if (!type.getLayout().isIdentity() || type.getRank() == 0 ||
        type.getNumDynamicDims() != 1 || !type.isDynamicDim(0) ||
        !alloc.getSymbolOperands().empty())
      return;
    Value rows = alloc.getDynamicSizes()[0];
    Value bound = boundIn(rows, loop);
    Operation *rowsDefinition = rows.getDefiningOp();
    if (!bound || !rowsDefinition ||
        rowsDefinition->getBlock() != alloc->getBlock())
      return;
    rewriter.setInsertionPointAfter(rowsDefinition);
    Location loc = alloc.getLoc();
    auto whole = memref::AllocOp::create(rewriter, loc, type, ValueRange{bound},
                                         alloc.getAlignmentAttr());
    SmallVector<OpFoldResult> sizes = {rows};
    SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t dim = type.getRank() - 1; dim > 0; --dim) {
      sizes.insert(sizes.begin() + 1,
                   rewriter.getIndexAttr(type.getDimSize(dim)));
      strides[dim - 1] = rewriter.getIndexAttr(
          type.getDimSize(dim) * *getConstantIntValue(strides[dim]));
    }
    auto view = memref::ReinterpretCastOp::create(
        rewriter, loc, type, whole, rewriter.getIndexAttr(0), sizes, strides);
    rewriter.replaceOp(alloc, view.getResult());
  }
};

} // namespace
