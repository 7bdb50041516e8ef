//===- SplitLast.cpp - a tensor's last dimension as several ---------------===//

#include "recur/Utils/SplitLast.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::recur::splitLast(OpBuilder &b, Location loc, Value value,
                             ArrayRef<int64_t> parts) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape().drop_back());
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < type.getRank() - 1; ++dim)
    groups.push_back({dim});
  groups.emplace_back();
  for (int64_t part : parts) {
    groups.back().push_back(shape.size());
    shape.push_back(part);
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
}

Value mlir::recur::joinLast(OpBuilder &b, Location loc, Value value,
                            int64_t parts) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < rank - parts; ++dim)
    groups.push_back({dim});
  groups.emplace_back();
  for (int64_t dim = rank - parts; dim < rank; ++dim)
    groups.back().push_back(dim);
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}
