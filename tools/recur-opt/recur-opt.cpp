//===- recur-opt.cpp - mlir-opt with the recur dialect and passes ---------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "recur/InitAll.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::recur::registerRecurPasses();

  mlir::DialectRegistry registry;
  mlir::recur::registerCompilerDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Recur optimizer driver\n", registry));
}
