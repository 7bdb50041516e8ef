//===- TensorCasts.h - a tensor as a type it is compatible with -*- C++ -*-===//
//
// Rewrites that rebuild an op often compute a value less (or more) static
// than the one it replaces: a tensor.cast bridges them.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_TENSORCASTS_H
#define RECUR_UTILS_TENSORCASTS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// `value` as `type` (a tensor.cast where they differ).
inline Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  return value.getType() == type
             ? value
             : tensor::CastOp::create(b, loc, type, value).getResult();
}

} // namespace mlir::recur

#endif // RECUR_UTILS_TENSORCASTS_H
