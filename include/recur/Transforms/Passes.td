//===- Passes.td - Recur's own transformation passes ----------------------===//

#ifndef RECUR_TRANSFORMS_PASSES_TD
#define RECUR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeShapes : Pass<"recur-specialize-shapes", "::mlir::ModuleOp"> {
  let summary = "Fix the dynamic sizes of named model inputs and refine the types that follow";
  let description = [{
    A model generated without `--seq`/`--batch` takes `tokens : tensor<?x?xi64>`.
    This pass gives named inputs (function arguments with a `recur.input`
    attribute) static shapes, e.g. `inputs=tokens=50x128`, then refines the
    result types of every recur op from its operands and updates the function's
    result types. Users that are neither recur ops nor `func.return` keep the
    type they had, through a `tensor.cast`.

    ```
    recur-opt model.mlir --recur-specialize-shapes="inputs=tokens=50x128"
    ```
  }];
  let options = [
    ListOption<"inputs", "inputs", "std::string",
               "Static shapes of named inputs as NAME=D0xD1x..., e.g. tokens=50x128">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif // RECUR_TRANSFORMS_PASSES_TD
