//===- CellMath.h - scalar math of recurrent cells --------------*- C++ -*-===//
//
// The scalar functions the cells' pointwise tails are made of, built the
// same way wherever a cell is written out (the named cells' generalisation,
// the LSTM's lowering).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_CELLMATH_H
#define RECUR_IR_CELLMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::recur {

/// σ(x) = 1 / (1 + exp(-x)) of a float scalar.
inline Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = arith::ConstantOp::create(b, loc, x.getType(),
                                        b.getFloatAttr(x.getType(), 1.0));
  Value negated = arith::NegFOp::create(b, loc, x);
  Value denominator =
      arith::AddFOp::create(b, loc, one, math::ExpOp::create(b, loc, negated));
  return arith::DivFOp::create(b, loc, one, denominator);
}

} // namespace mlir::recur

#endif // RECUR_IR_CELLMATH_H
