//===- GatherRows.cpp - rows of a table gathered by integer ids -----------===//

#include "recur/Utils/GatherRows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::recur::gatherRows(OpBuilder &b, Location loc, Value table,
                              Value ids, Value into) {
  auto tableType = cast<RankedTensorType>(table.getType());
  auto idsType = cast<RankedTensorType>(ids.getType());
  unsigned rank = idsType.getRank() + 1;
  Value init = into;
  if (!init) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, ids);
    sizes.push_back(tensor::getMixedSize(b, loc, table, 1));
    init = tensor::EmptyOp::create(b, loc, sizes, tableType.getElementType());
  }
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    leading.push_back(getAffineDimExpr(dim, context));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{ids},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 AffineMap::get(rank, 0, leading, context),
                 AffineMap::getMultiDimIdentityMap(rank, context)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               Value row = arith::IndexCastOp::create(
                   nested, loc, nested.getIndexType(), args[0]);
               Value column = linalg::IndexOp::create(nested, loc, rank - 1);
               Value element = tensor::ExtractOp::create(
                   nested, loc, table, ValueRange{row, column});
               linalg::YieldOp::create(nested, loc, element);
             })
      .getResult(0);
}
