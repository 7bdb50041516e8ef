//===- MarkWritableArguments.cpp - which model arguments may be written ---===//

#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::recur {
#define GEN_PASS_DEF_MARKWRITABLEARGUMENTS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {
struct MarkWritableArgumentsPass
    : mlir::recur::impl::MarkWritableArgumentsBase<MarkWritableArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    llvm::StringSet<> updated;
    for (unsigned index = 0; index < function.getNumResults(); ++index)
      if (auto name = function.getResultAttrOfType<StringAttr>(
              index, RecurDialect::kUpdateAttrName))
        updated.insert(name.getValue());
    for (unsigned index = 0; index < function.getNumArguments(); ++index) {
      auto weight = function.getArgAttrOfType<StringAttr>(
          index, RecurDialect::kWeightAttrName);
      bool callerOwned =
          function.getArgAttr(index, RecurDialect::kInputAttrName) || weight ||
          function.getArgAttr(index, RecurDialect::kDerivedAttrName);
      if (callerOwned)
        function.setArgAttr(
            index, bufferization::BufferizationDialect::kWritableAttrName,
            BoolAttr::get(&getContext(),
                          weight && updated.contains(weight.getValue())));
    }
  }
};
} // namespace
