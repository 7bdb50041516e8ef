//===- GateSums.cpp - a unit's gate sums over k, in registers -------------===//

#include "recur/Utils/GateSums.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

arith::FastMathFlagsAttr mlir::recur::reassociable(MLIRContext *context) {
  return arith::FastMathFlagsAttr::get(
      context, arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
}

SmallVector<Value> mlir::recur::accumulateGates(OpBuilder &b, Location loc,
                                                ValueRange sums,
                                                ArrayRef<Value> rows,
                                                const GateProduct &product) {
  arith::FastMathFlagsAttr fastMath = reassociable(b.getContext());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = arith::ConstantIndexOp::create(
      b, loc, cast<RankedTensorType>(product.w.getType()).getShape()[1]);
  auto loop = scf::ForOp::create(
      b, loc, zero, size, one, sums,
      [&](OpBuilder &kb, Location loc, Value k, ValueRange acc) {
        SmallVector<Value> indices(product.leading.begin(),
                                   product.leading.end());
        indices.push_back(k);
        Value xk = tensor::ExtractOp::create(kb, loc, product.x, indices);
        SmallVector<Value> next;
        for (auto [sum, row] : llvm::zip_equal(acc, rows)) {
          Value weight =
              tensor::ExtractOp::create(kb, loc, product.w, ValueRange{row, k});
          Value term = arith::MulFOp::create(kb, loc, xk, weight, fastMath);
          next.push_back(arith::AddFOp::create(kb, loc, sum, term, fastMath));
        }
        scf::YieldOp::create(kb, loc, next);
      });
  return llvm::to_vector_of<Value>(loop.getResults());
}
