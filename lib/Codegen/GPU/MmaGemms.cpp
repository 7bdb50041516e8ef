//===- MmaGemms.cpp - GEMMs on tensor cores (tf32, bf16) ------------------===//
//
// recur-gpu-tiled-gemms' kernel for precision=tf32 and bf16. Each warp
// computes its part of the block's output tile as 16 x 8 tiles: per tile and
// k-step one nvgpu.mma.sync (m16n8k8 on tf32, m16n8k16 on bf16) with f32
// accumulators in registers. The operands are rounded to the MMA's type as
// they are staged in shared memory, row-major ([row][k], k contiguous), so
// that each lane's fragment registers are single 32-bit loads. The rows are
// padded by 16 bytes: the 8 rows x 4 k-groups that a warp's fragment load
// touches then fall into 32 different banks.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::recur::gemm;

namespace {

/// PTX's fragment layouts group a warp's lanes by 4: lane l holds elements
/// of rows (or columns) `l / 4` (+ 8) and k `(l % 4) * pack` (+ k / 2).
constexpr int64_t kLanesPerGroup = 4;

int64_t sharedPadding(Type type) { return 128 / type.getIntOrFloatBitWidth(); }

/// Stores a thread's parts of a k-slice into `shared` ([row][k]), rounded
/// to the MMA's operand type.
void storeRounded(OpBuilder &b, Location loc, const OperandSlices &slices,
                  const MmaTiles &tiles, Value shared, ValueRange loaded) {
  int64_t bytes = slices.width * tiles.operandType.getIntOrFloatBitWidth() / 8;
  for (auto [part, value] : llvm::zip_equal(slices.parts, loaded)) {
    Value rounded = roundToOperandType(b, loc, value, tiles.operandType);
    vector::StoreOp::create(b, loc, rounded, shared,
                            ValueRange{part.row, part.kOffset},
                            /*nontemporal=*/false, llvm::MaybeAlign(bytes));
  }
}

} // namespace

void mlir::recur::gemm::buildMmaGemmKernel(RewriterBase &rewriter,
                                           const Gemm &gemm,
                                           const MmaTiles &tiles,
                                           StringRef name) {
  linalg::GenericOp op = gemm.op;
  Location loc = op.getLoc();
  int64_t threads = tiles.threads();
  GemmLaunch launch =
      createGemmLaunch(rewriter, gemm, tiles.m, tiles.n, threads, name);
  Type elementType = tiles.operandType;
  int64_t stride = tiles.k + sharedPadding(elementType);
  Value aShared = launch.addSharedBuffer({tiles.m, stride}, elementType);
  Value bShared = launch.addSharedBuffer({tiles.n, stride}, elementType);

  OpBuilder b(launch.bodyEnd);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto add = [&](Value value, int64_t offset) -> Value {
    return offset == 0 ? value
                       : arith::AddIOp::create(b, loc, value, constant(offset))
                             .getResult();
  };
  OperandSlices aSlices = makeOperandSlices(
      b, loc, launch, gemm, gemm.a, gemm.mDims, tiles.m, launch.rowTile,
      launch.rows, tiles.k, tiles.loadWidth(tiles.m), threads);
  OperandSlices bSlices = makeOperandSlices(
      b, loc, launch, gemm, gemm.b, gemm.nDims, tiles.n, launch.columnTile,
      launch.columns, tiles.k, tiles.loadWidth(tiles.n), threads);

  // Warp w computes rows warpRow + [0, warpM) and columns warpColumn +
  // [0, warpN) of the block's tile; its lane l holds, of each 16 x 8 tile,
  // the fragments of group l / 4 and k-group l % 4.
  Value warp = arith::DivUIOp::create(b, loc, launch.threadId, constant(32));
  Value lane = arith::RemUIOp::create(b, loc, launch.threadId, constant(32));
  int64_t warpsN = tiles.n / tiles.warpN;
  Value group = arith::DivUIOp::create(b, loc, lane, constant(kLanesPerGroup));
  Value kGroup = arith::RemUIOp::create(b, loc, lane, constant(kLanesPerGroup));
  Value warpRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, warp, constant(warpsN)),
      constant(tiles.warpM));
  Value warpColumn = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, warp, constant(warpsN)),
      constant(tiles.warpN));
  Value aRow = arith::AddIOp::create(b, loc, warpRow, group);
  Value bRow = arith::AddIOp::create(b, loc, warpColumn, group);
  // Operand elements per 32-bit register: 1 (tf32), 2 (bf16).
  int64_t pack = 32 / elementType.getIntOrFloatBitWidth();
  Value laneK = arith::MulIOp::create(b, loc, kGroup, constant(pack));
  int64_t mmaK = tiles.mmaK();
  int64_t tilesM = tiles.warpM / 16, tilesN = tiles.warpN / 8;

  // A fragment of `registers` 32-bit registers: register r holds row
  // `firstRow` + 8 (r % 2) (A; B: none) and k `kStep` + laneK + (r / 2)
  // mmaK / 2 (A; B: r mmaK / 2), as PTX lays out m16n8k8 and m16n8k16.
  auto fragment = [&](Value shared, Value firstRow, int64_t kStep,
                      int64_t registers, bool isA) -> Value {
    auto type = VectorType::get({registers, pack}, elementType);
    Value result = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getZeroAttr(elementType)));
    for (int64_t r = 0; r < registers; ++r) {
      int64_t rowOffset = isA ? 8 * (r % 2) : 0;
      int64_t kOffset = (isA ? r / 2 : r) * (mmaK / 2);
      Value piece = vector::LoadOp::create(
          b, loc, VectorType::get({pack}, elementType), shared,
          ValueRange{add(firstRow, rowOffset), add(laneK, kStep + kOffset)},
          /*nontemporal=*/false, llvm::MaybeAlign(4));
      result = vector::InsertOp::create(b, loc, piece, result, r);
    }
    return result;
  };

  auto accumulatorType = VectorType::get({2, 2}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accumulatorType, 0.0f));

  // The fragment builders above use `b`: each callback points it at the
  // loop body.
  auto stage = [&](OpBuilder &body, ValueRange aParts, ValueRange bParts) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(body.getInsertionBlock(), body.getInsertionPoint());
    storeRounded(b, loc, aSlices, tiles, aShared, aParts);
    storeRounded(b, loc, bSlices, tiles, bShared, bParts);
  };
  // Unrolled over the slice: fragment addresses become immediates.
  auto multiply = [&](OpBuilder &body, SmallVectorImpl<Value> &sums) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(body.getInsertionBlock(), body.getInsertionPoint());
    for (int64_t kStep = 0; kStep < tiles.k; kStep += mmaK) {
      SmallVector<Value> aFragments, bFragments;
      for (int64_t i = 0; i < tilesM; ++i)
        aFragments.push_back(
            fragment(aShared, add(aRow, 16 * i), kStep, 4, true));
      for (int64_t j = 0; j < tilesN; ++j)
        bFragments.push_back(
            fragment(bShared, add(bRow, 8 * j), kStep, 2, false));
      for (int64_t i = 0; i < tilesM; ++i)
        for (int64_t j = 0; j < tilesN; ++j) {
          Value &sum = sums[i * tilesN + j];
          sum = nvgpu::MmaSyncOp::create(b, loc, aFragments[i], bFragments[j],
                                         sum, ArrayRef<int64_t>{16, 8, mmaK},
                                         tiles.tf32());
        }
    }
  };
  SmallVector<Value> sums = buildSliceLoop(
      b, loc, launch, tiles.k, aSlices, bSlices,
      SmallVector<Value>(tilesM * tilesN, zeros), stage, multiply);

  // c += the sums: accumulator (i, j) of a 16 x 8 tile is row group + 8 i,
  // column 2 (lane % 4) + j.
  Value laneColumn = arith::MulIOp::create(b, loc, kGroup, constant(2));
  Value firstRow = arith::AddIOp::create(b, loc, launch.rowTile, aRow);
  Value firstColumn = arith::AddIOp::create(
      b, loc, launch.columnTile,
      arith::AddIOp::create(b, loc, warpColumn, laneColumn));
  for (int64_t ti = 0; ti < tilesM; ++ti)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = add(firstRow, 16 * ti + 8 * i);
      SmallVector<std::pair<Value, Value>> columnSums;
      for (int64_t tj = 0; tj < tilesN; ++tj)
        for (int64_t j = 0; j < 2; ++j)
          columnSums.push_back(
              {add(firstColumn, 8 * tj + j),
               vector::ExtractOp::create(b, loc, sums[ti * tilesN + tj],
                                         ArrayRef<int64_t>{i, j})});
      launch.accumulate(b, gemm, row, columnSums);
    }
  rewriter.eraseOp(op);
}

Value mlir::recur::gemm::roundToOperandType(OpBuilder &b, Location loc,
                                            Value value, Type operandType) {
  Type type = value.getType();
  if (!operandType.isF32())
    return arith::TruncFOp::create(
        b, loc,
        getElementTypeOrSelf(type) == type
            ? operandType
            : cast<VectorType>(type).clone(operandType),
        value);
  Type bitsType = b.getI32Type();
  if (auto vector = dyn_cast<VectorType>(type))
    bitsType = vector.clone(bitsType);
  auto constant = [&](uint32_t bits) -> Value {
    TypedAttr attr = b.getI32IntegerAttr(static_cast<int32_t>(bits));
    if (auto vector = dyn_cast<VectorType>(bitsType))
      attr = DenseElementsAttr::get(vector, attr);
    return arith::ConstantOp::create(b, loc, attr);
  };
  Value bits = arith::BitcastOp::create(b, loc, bitsType, value);
  Value rounded = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, constant(0x1000)),
      constant(0xFFFFE000));
  Value exponentMask = constant(0x7F800000);
  Value special = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, bits, exponentMask), exponentMask);
  return arith::BitcastOp::create(
      b, loc, type, arith::SelectOp::create(b, loc, special, bits, rounded));
}

Type mlir::recur::gemm::mmaOperandType(MLIRContext *context,
                                       Precision precision) {
  switch (precision) {
  case Precision::fp32:
    return {};
  case Precision::tf32:
    return Float32Type::get(context);
  case Precision::bf16:
    return BFloat16Type::get(context);
  }
  llvm_unreachable("unknown precision");
}
