//===- Bf16MmaToNVVM.cpp - bf16 nvgpu.mma.sync as nvvm.mma.sync -----------===//
//
// LLVM 22's convert-nvgpu-to-nvvm deduces no PTX type for bf16 operands and
// rejects the op ("failed to deduce operand PTX types"), though nvvm.mma.sync
// and PTX have m16n8k16 bf16. This pass lowers those ops first, the way
// upstream lowers f16 ones: each row of the A and B fragments (two bf16) is
// one 32-bit register.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUBF16MMATONVVM
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// Each row of `fragment` (vector<R x 2 x bf16>) as an i32. The elements
/// are taken one by one and folded: a fragment that canonicalization made an
/// n-D vector.from_elements or vector.shape_cast, which the NVVM lowering
/// does not take, then leaves no use of it.
SmallVector<Value> registers(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  SmallVector<Value> result;
  for (int64_t r = 0; r < type.getDimSize(0); ++r) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < type.getDimSize(1); ++i)
      elements.push_back(b.createOrFold<vector::ExtractOp>(
          loc, fragment, ArrayRef<int64_t>{r, i}));
    Value row = vector::FromElementsOp::create(
        b, loc, VectorType::get({type.getDimSize(1)}, type.getElementType()),
        elements);
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), row);
    result.push_back(vector::ExtractOp::create(b, loc, word, 0));
  }
  return result;
}

struct GpuBf16MmaToNVVMPass
    : mlir::recur::impl::GpuBf16MmaToNVVMBase<GpuBf16MmaToNVVMPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult result = getOperation().walk([&](nvgpu::MmaSyncOp mma) {
      auto aType = cast<VectorType>(mma.getMatrixA().getType());
      if (!aType.getElementType().isBF16())
        return WalkResult::advance();
      std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
      auto cType = cast<VectorType>(mma.getMatrixC().getType());
      if (ArrayRef<int64_t>(shape) != ArrayRef<int64_t>{16, 8, 16} ||
          aType.getShape() != ArrayRef<int64_t>{4, 2} ||
          cType.getShape() != ArrayRef<int64_t>{2, 2} ||
          !cType.getElementType().isF32()) {
        mma.emitError("only m16n8k16 bf16 MMAs with f32 sums are lowered");
        return WalkResult::interrupt();
      }
      Location loc = mma.getLoc();
      rewriter.setInsertionPoint(mma);
      SmallVector<Value> sums;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          sums.push_back(vector::ExtractOp::create(
              rewriter, loc, mma.getMatrixC(), ArrayRef<int64_t>{i, j}));
      Type f32 = rewriter.getF32Type();
      auto resultType = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                         {f32, f32, f32, f32});
      auto nvvmMma = NVVM::MmaOp::create(
          rewriter, loc, resultType, registers(rewriter, loc, mma.getMatrixA()),
          registers(rewriter, loc, mma.getMatrixB()), sums, shape,
          /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
          std::array{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
          std::array{NVVM::MMALayout::row, NVVM::MMALayout::col});
      SmallVector<Value> results;
      for (int64_t index = 0; index < 4; ++index)
        results.push_back(
            LLVM::ExtractValueOp::create(rewriter, loc, nvvmMma, index));
      Operation *a = mma.getMatrixA().getDefiningOp();
      Operation *b = mma.getMatrixB().getDefiningOp();
      rewriter.replaceOpWithNewOp<vector::FromElementsOp>(mma, cType, results);
      // What the folding left unused.
      for (Operation *fragment : {a, b})
        if (fragment && fragment->use_empty() && isPure(fragment))
          rewriter.eraseOp(fragment);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
