//===- LibraryGemms.cpp - GEMMs outside time loops as cuBLASLt calls ------===//
//
// DESIGN.md allows a vendor library for the dense GEMMs outside the
// recurrence (and only there): with `recur-compile --gemm=cublaslt` each such
// GEMM becomes a host call that the runtime runs with cuBLASLt, so that the
// generated kernels can be compared with the library on the same model. The
// call takes row-major matrices (address, rows, leading dimension) read from
// the buffers' strided metadata; the runtime maps them onto cuBLASLt's
// column-major convention.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"
#include "recur/Codegen/Passes.h"
#include "recur/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPULIBRARYGEMMS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur::gemm;

namespace {

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// Whether `map`'s results are exactly the loop dimensions `dims`.
bool indexesInOrder(AffineMap map, ArrayRef<unsigned> dims) {
  if (map.getNumResults() != dims.size())
    return false;
  for (auto [position, dim] : llvm::enumerate(dims))
    if (map.getDimPosition(position) != dim)
      return false;
  return true;
}

/// Whether `buffer`'s dimensions, grouped as [0, rowDims) and [rowDims,
/// rank), collapse into a row-major matrix with contiguous rows.
bool isMatrix(Value buffer, unsigned rowDims) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return false;
  ReassociationIndices rows, columns;
  for (unsigned dim = 0; dim < type.getRank(); ++dim)
    (dim < rowDims ? rows : columns).push_back(dim);
  return memref::CollapseShapeOp::isGuaranteedCollapsible(type,
                                                          {rows, columns});
}

/// Whether the library can compute `gemm` on its buffers as they are laid out.
bool fitsLibrary(const Gemm &gemm) {
  linalg::GenericOp op = gemm.op;
  SmallVector<unsigned> aDims(gemm.mDims), bDims(gemm.nDims), cDims(gemm.mDims);
  aDims.push_back(gemm.kDim);
  bDims.push_back(gemm.kDim);
  llvm::append_range(cDims, gemm.nDims);
  return indexesInOrder(op.getMatchingIndexingMap(gemm.a), aDims) &&
         indexesInOrder(op.getMatchingIndexingMap(gemm.b), bDims) &&
         indexesInOrder(op.getMatchingIndexingMap(gemm.c), cDims) &&
         isMatrix(gemm.a->get(), gemm.mDims.size()) &&
         isMatrix(gemm.b->get(), gemm.nDims.size()) &&
         isMatrix(gemm.c->get(), gemm.mDims.size());
}

/// A buffer as the call passes it: its device address and the distance
/// between its rows (i64), and its sizes, from its strided metadata.
struct Matrix {
  Value address, leading;
  ValueRange sizes;
};

Matrix describeMatrix(OpBuilder &b, Location loc, Value buffer,
                      unsigned rowDims) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value elementBytes = arith::ConstantIndexOp::create(
      b, loc, cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8);
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, metadata.getOffset(), elementBytes));
  return {toI64(b, loc, address),
          toI64(b, loc, metadata.getStrides()[rowDims - 1]),
          metadata.getSizes()};
}

/// The product of `sizes`, as i64.
Value product(OpBuilder &b, Location loc, ValueRange sizes) {
  Value result = sizes.front();
  for (Value size : sizes.drop_front())
    result = arith::MulIOp::create(b, loc, result, size);
  return toI64(b, loc, result);
}

struct GpuLibraryGemmsPass
    : public mlir::recur::impl::GpuLibraryGemmsBase<GpuLibraryGemmsPass> {
  using GpuLibraryGemmsBase::GpuLibraryGemmsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int32_t precisionCode =
        precision == recur::Precision::fp32   ? RECUR_GEMM_FP32
        : precision == recur::Precision::bf16 ? RECUR_GEMM_BF16
                                              : RECUR_GEMM_TF32;

    // Inside a loop, a GEMM is a step of the persistent kernel.
    SmallVector<Gemm> gemms;
    module.walk([&](linalg::GenericOp op) {
      if (!op->getParentOfType<LoopLikeOpInterface>())
        // One of a packed batch's tokens alone is the tiled kernels'.
        if (std::optional<Gemm> gemm = matchGemm(op);
            gemm && !gemm->lengths && fitsLibrary(*gemm))
          gemms.push_back(*gemm);
    });
    if (gemms.empty())
      return;

    OpBuilder b(&getContext());
    Type i64 = b.getI64Type();
    auto callee = module.lookupSymbol<func::FuncOp>(RECUR_GPU_MATMUL_SYMBOL);
    if (!callee) {
      b.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> arguments(9, i64);
      arguments.push_back(b.getI32Type());
      callee = func::FuncOp::create(b, module.getLoc(), RECUR_GPU_MATMUL_SYMBOL,
                                    b.getFunctionType(arguments, {}));
      callee.setPrivate();
    }
    for (Gemm &gemm : gemms) {
      Location loc = gemm.op.getLoc();
      b.setInsertionPoint(gemm.op);
      unsigned mDims = gemm.mDims.size();
      Matrix a = describeMatrix(b, loc, gemm.a->get(), mDims);
      Matrix bMatrix = describeMatrix(b, loc, gemm.b->get(), gemm.nDims.size());
      Matrix c = describeMatrix(b, loc, gemm.c->get(), mDims);
      Value m = product(b, loc, c.sizes.take_front(mDims));
      Value n = product(b, loc, c.sizes.drop_front(mDims));
      Value k = toI64(b, loc, a.sizes.back());
      Value code = arith::ConstantIntOp::create(b, loc, precisionCode, 32);
      func::CallOp::create(b, loc, callee,
                           ValueRange{m, n, k, a.address, a.leading,
                                      bMatrix.address, bMatrix.leading,
                                      c.address, c.leading, code});
      gemm.op.erase();
    }
  }
};

} // namespace
