//===- PackPanels.cpp - a matrix in the CPU GEMM kernels' panels ----------===//
//
// Shared by the conversion (recur.pack_panels) and CPU code generation
// (recur-pack-gemm-operands), so that neither links the other.
//
//===----------------------------------------------------------------------===//

#include "recur/Utils/PackPanels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::recur::packPanels(OpBuilder &b, Location loc, Value source,
                              int64_t tile, bool pairs) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t split = type.getDimSize(0), other = type.getDimSize(1);
  Type elementType = type.getElementType();
  int64_t panels = llvm::divideCeilSigned(split, tile);
  auto packedType =
      pairs ? RankedTensorType::get({panels, other / 2, tile, 2}, elementType)
            : RankedTensorType::get({panels, other, tile}, elementType);
  unsigned rank = packedType.getRank();
  Value init =
      tensor::EmptyOp::create(b, loc, packedType.getShape(), elementType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{packedType}, ValueRange{}, ValueRange{init},
      AffineMap::getMultiDimIdentityMap(rank, b.getContext()),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange) {
        auto constant = [&](int64_t value) {
          return arith::ConstantIndexOp::create(nb, loc, value).getResult();
        };
        // Row p * tile + j, column k (pairs: column 2i + s).
        Value lane = linalg::IndexOp::create(nb, loc, 2);
        Value otherIndex = linalg::IndexOp::create(nb, loc, 1);
        if (pairs)
          otherIndex = arith::AddIOp::create(
              nb, loc, arith::MulIOp::create(nb, loc, otherIndex, constant(2)),
              linalg::IndexOp::create(nb, loc, 3));
        Value index = arith::AddIOp::create(
            nb, loc,
            arith::MulIOp::create(nb, loc, linalg::IndexOp::create(nb, loc, 0),
                                  constant(tile)),
            lane);
        Value inside = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                             index, constant(split));
        // Padding reads index 0 and keeps zero.
        Value safe =
            arith::SelectOp::create(nb, loc, inside, index, constant(0));
        Value value = tensor::ExtractOp::create(nb, loc, source,
                                                ValueRange{safe, otherIndex});
        Value zero = arith::ConstantOp::create(
            nb, loc, elementType, nb.getFloatAttr(elementType, 0.0));
        linalg::YieldOp::create(
            nb, loc,
            arith::SelectOp::create(nb, loc, inside, value, zero).getResult());
      });
  return generic.getResult(0);
}
