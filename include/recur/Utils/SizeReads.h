//===- SizeReads.h - uses of a tensor that read only its sizes --*- C++ -*-===//
//
// A pass that replaces a tensor by another of the same leading sizes (x_t
// by its product, a layer's output sequence by the stack's input, an
// embedding by its projected gather) need not mind the uses that read only
// those sizes: a GRU layer's zero initial state takes B from its input.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_SIZEREADS_H
#define RECUR_UTILS_SIZEREADS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::recur {

/// `user` as a read of one of a tensor's first `leading` sizes (a
/// tensor.dim with a constant index below `leading`), or null.
inline tensor::DimOp leadingSizeRead(Operation *user, int64_t leading) {
  auto dim = dyn_cast<tensor::DimOp>(user);
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  return index && *index < leading ? dim : tensor::DimOp();
}

/// The ops that read `value` other than for one of its first `leading`
/// sizes.
inline SmallVector<Operation *> readersBeyondSizes(Value value,
                                                   int64_t leading) {
  SmallVector<Operation *> readers;
  for (Operation *user : value.getUsers())
    if (!leadingSizeRead(user, leading))
      readers.push_back(user);
  return readers;
}

} // namespace mlir::recur

#endif // RECUR_UTILS_SIZEREADS_H
