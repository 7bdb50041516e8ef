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

#endif // RECUR_IR_RECURINTERFACES_TD
