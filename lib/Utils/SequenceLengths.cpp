//===- SequenceLengths.cpp - the active rows of a packed batch ------------===//

#include "recur/Utils/SequenceLengths.h"

#include "recur/IR/RecurDialect.h"
#include "recur/Utils/GateSums.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

/// [T] i64: sum over b of `term`(lengths[b] as i64, t as i64).
static Value
sumOverRows(OpBuilder &b, Location loc, Value lengths, OpFoldResult steps,
            function_ref<Value(OpBuilder &, Location, Value, Value)> term) {
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
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::AddIOp::create(
                       nb, loc, args[1], term(nb, loc, length, time))});
             })
      .getResult(0);
}

Value mlir::recur::activeRowCounts(OpBuilder &b, Location loc, Value lengths,
                                   OpFoldResult steps) {
  return sumOverRows(
      b, loc, lengths, steps,
      [](OpBuilder &b, Location loc, Value length, Value time) -> Value {
        Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             time, length);
        return arith::ExtUIOp::create(b, loc, length.getType(), active);
      });
}

Value mlir::recur::tokensBeforeSteps(OpBuilder &b, Location loc, Value lengths,
                                     OpFoldResult steps) {
  return sumOverRows(
      b, loc, lengths, steps,
      [](OpBuilder &b, Location loc, Value length, Value time) -> Value {
        return arith::MinSIOp::create(b, loc, length, time);
      });
}

Value mlir::recur::activeRows(OpBuilder &b, Location loc, Value counts, Value t,
                              OpFoldResult batch) {
  Value count = tensor::ExtractOp::create(b, loc, counts, t);
  return arith::MinUIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), count),
      getValueOrCreateConstantIndexOp(b, loc, batch));
}

Value mlir::recur::activeRowsMatmulTransposed(OpBuilder &b, Location loc,
                                              Value x, Value w, Value lengths,
                                              Value tokensBefore, Value order,
                                              Value acc) {
  MLIRContext *context = b.getContext();
  AffineExpr t = b.getAffineDimExpr(0), row = b.getAffineDimExpr(1),
             n = b.getAffineDimExpr(2), k = b.getAffineDimExpr(3);
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(4, 0, exprs, context);
  };
  SmallVector<Value> inputs = {x, w, lengths, tokensBefore};
  SmallVector<AffineMap> maps = {map({t, row, k}), map({n, k}), map({row}),
                                 map({t})};
  if (order) {
    inputs.push_back(order);
    maps.push_back(map({row}));
  }
  maps.push_back(map({t, row, n}));
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  arith::FastMathFlagsAttr fastMath = reassociable(context);
  auto gemm = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &nested, Location loc, ValueRange args) {
        Value length = args[2], sum = args.back();
        Value time =
            arith::IndexCastOp::create(nested, loc, length.getType(),
                                       linalg::IndexOp::create(nested, loc, 0));
        Value active = arith::CmpIOp::create(
            nested, loc, arith::CmpIPredicate::slt, time, length);
        Value product =
            arith::MulFOp::create(nested, loc, args[0], args[1], fastMath);
        Value added =
            arith::AddFOp::create(nested, loc, sum, product, fastMath);
        linalg::YieldOp::create(nested, loc,
                                ValueRange{arith::SelectOp::create(
                                    nested, loc, active, added, sum)});
      });
  gemm->setAttr(RecurDialect::kActiveRowsAttrName, UnitAttr::get(context));
  return gemm.getResult(0);
}
