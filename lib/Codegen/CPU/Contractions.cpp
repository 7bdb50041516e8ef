//===- Contractions.cpp - the GEMM form of the CPU kernels ----------------===//

#include "Contractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

bool mlir::recur::isMultiplyAccumulate(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value accumulator = body.getArgument(2);
  Value product = add.getLhs() == accumulator   ? add.getRhs()
                  : add.getRhs() == accumulator ? add.getLhs()
                                                : Value();
  auto multiply = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!multiply)
    return false;
  Value a = body.getArgument(0), w = body.getArgument(1);
  return (multiply.getLhs() == a && multiply.getRhs() == w) ||
         (multiply.getLhs() == w && multiply.getRhs() == a);
}
