//===- RecurInterfaces.td - recur op interfaces ---------------------------===//

#ifndef RECUR_IR_RECURINTERFACES_TD
#define RECUR_IR_RECURINTERFACES_TD

include "mlir/IR/OpBase.td"

def Recur_ResultTypeInference : OpInterface<"ResultTypeInference"> {
  let cppNamespace = "::mlir::recur";
  let description = [{
    An op whose result types follow from its operand types. Used by builders
    and by shape specialization to refine results after operands got more
    static.
  }];
  let methods = [
    InterfaceMethod<
      "The most static result types the current operand types imply.",
      "::llvm::SmallVector<::mlir::Type>", "inferResultTypes">,
  ];
}

def Recur_NamedOperands : OpInterface<"NamedOperands"> {
  let cppNamespace = "::mlir::recur";
  let description = [{
    The op's operands by their ODS names (`w_ih`, `h0`, ...), so that code
    outside the op (the model description's program, which the reference
    interpreter reads) names operands instead of counting positions. Every
    recur op has it: `Recur_Op` derives the names from the op's `arguments`.
  }];
  let methods = [
    StaticInterfaceMethod<
      "The ODS names of the operands (attributes excluded), in order.",
      "::llvm::ArrayRef<::llvm::StringLiteral>", "getOperandNames", (ins),
      [{}], [{ return ConcreteOp::kOperandNames; }]>,
    InterfaceMethod<
      "The values of ODS operand `index`: one, or none or several for an "
      "optional or variadic operand.",
      "::mlir::OperandRange", "getNamedOperand", (ins "unsigned":$index),
      [{}], [{ return $_op.getODSOperands(index); }]>,
  ];
}

def Recur_Differentiable : OpInterface<"Differentiable"> {
  let cppNamespace = "::mlir::recur";
  let description = [{
    An op that `recur-differentiate` can run backward: given the gradient of
    the loss with respect to each of its results, it builds the gradient with
    respect to each operand (its vector-Jacobian product) out of recur ops,
    such as `recur.lstm_grad` for `recur.lstm`.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradients of the
        operands for which `needed` is true, from `resultGradients` (one per
        result, null where the loss does not depend on that result). Sets
        `operandGradients` to one value per operand, null where not needed
        or not differentiable (integer ids). Fails with a diagnostic on the
        op for what it cannot differentiate yet.
      }],
      "::mlir::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGradients,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

#endif // RECUR_IR_RECURINTERFACES_TD
