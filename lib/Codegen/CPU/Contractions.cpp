//===- Contractions.cpp - the GEMM form of the CPU kernels ----------------===//

#include "Contractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

bool mlir::recur::isMultiplyAccumulate(linalg::GenericOp op,
                                       bool extendedInputs) {
  Block &body = op.getRegion().front();
  size_t extensions = 0;
  if (extendedInputs)
    extensions = llvm::count_if(body.getOperations(), [](Operation &nested) {
      return isa<arith::ExtFOp>(nested);
    });
  if (body.getOperations().size() != 3 + extensions)
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
  auto operand = [&](Value value) {
    if (auto extension = value.getDefiningOp<arith::ExtFOp>();
        extendedInputs && extension)
      return extension.getIn();
    return value;
  };
  Value lhs = operand(multiply.getLhs()), rhs = operand(multiply.getRhs());
  return (lhs == a && rhs == w) || (lhs == w && rhs == a);
}
