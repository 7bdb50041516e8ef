//===- SequenceLengths.cpp - the active rows of a packed batch ------------===//

#include "recur/Utils/SequenceLengths.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::recur::activeRowCounts(OpBuilder &b, Location loc, Value lengths,
                                   OpFoldResult steps) {
  // Counted in i64, whatever the lengths' width.
  Type element = b.getI64Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value init = tensor::EmptyOp::create(b, loc, SmallVector<OpFoldResult>{steps},
                                       element);
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  MLIRContext *context = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{lengths},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 AffineMap::get(2, 0, getAffineDimExpr(1, context), context),
                 AffineMap::get(2, 0, getAffineDimExpr(0, context), context)},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location loc, ValueRange args) {
               Value length = args[0];
               if (length.getType() != element)
                 length = arith::ExtSIOp::create(nb, loc, element, length);
               Value time = arith::IndexCastOp::create(
                   nb, loc, element, linalg::IndexOp::create(nb, loc, 0));
               Value active = arith::CmpIOp::create(
                   nb, loc, arith::CmpIPredicate::slt, time, length);
               Value one = arith::ExtUIOp::create(nb, loc, element, active);
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::AddIOp::create(nb, loc, args[1], one)});
             })
      .getResult(0);
}

Value mlir::recur::activeRows(OpBuilder &b, Location loc, Value counts, Value t,
                              OpFoldResult batch) {
  Value count = tensor::ExtractOp::create(b, loc, counts, t);
  return arith::MinUIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), count),
      getValueOrCreateConstantIndexOp(b, loc, batch));
}
