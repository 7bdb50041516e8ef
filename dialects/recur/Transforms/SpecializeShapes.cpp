//===- SpecializeShapes.cpp - Fix dynamic input sizes, refine the rest ----===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::recur {
#define GEN_PASS_DEF_SPECIALIZESHAPES
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// Parses "NAME=D0xD1x..." into a name and static sizes.
static FailureOr<std::pair<std::string, SmallVector<int64_t>>>
parseInputShape(StringRef spec) {
  auto [name, dims] = spec.split('=');
  if (name.empty() || dims.empty())
    return failure();
  SmallVector<int64_t> sizes;
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size <= 0)
      return failure();
    sizes.push_back(size);
  }
  return std::make_pair(name.str(), sizes);
}

struct SpecializeShapesPass
    : public mlir::recur::impl::SpecializeShapesBase<SpecializeShapesPass> {
  using SpecializeShapesBase::SpecializeShapesBase;

  void runOnOperation() override {
    llvm::StringMap<SmallVector<int64_t>> shapes;
    for (const std::string &spec : inputs) {
      auto parsed = parseInputShape(spec);
      if (failed(parsed)) {
        emitError(getOperation().getLoc())
            << "recur-specialize-shapes: cannot parse input shape '" << spec
            << "'; expected NAME=D0xD1x... with positive sizes, e.g. "
               "tokens=50x128";
        return signalPassFailure();
      }
      shapes[parsed->first] = parsed->second;
    }

    llvm::StringSet<> found;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      if (failed(specialize(function, shapes, found)))
        return signalPassFailure();
    }
    for (const auto &entry : shapes) {
      if (!found.contains(entry.getKey())) {
        emitError(getOperation().getLoc())
            << "recur-specialize-shapes: no function argument is named '"
            << entry.getKey() << "' (by a '" << RecurDialect::kInputAttrName
            << "' attribute)";
        return signalPassFailure();
      }
    }
  }

  LogicalResult specialize(func::FuncOp function,
                           const llvm::StringMap<SmallVector<int64_t>> &shapes,
                           llvm::StringSet<> &found) {
    Block &entry = function.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      auto name = function.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), RecurDialect::kInputAttrName);
      if (!name || !shapes.count(name.getValue()))
        continue;
      found.insert(name.getValue());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      ArrayRef<int64_t> sizes = shapes.find(name.getValue())->second;
      auto specialized =
          type ? RankedTensorType::get(sizes, type.getElementType())
               : RankedTensorType();
      if (!type || failed(verifyCompatibleShape(type, specialized)))
        return function.emitError()
               << "recur-specialize-shapes: input '" << name.getValue()
               << "' has type " << arg.getType()
               << ", which cannot take the shape "
               << llvm::join(
                      llvm::map_range(
                          sizes, [](int64_t s) { return std::to_string(s); }),
                      "x");
      refine(arg, specialized);
    }

    function.walk([&](ResultTypeInference op) {
      for (auto [result, inferred] :
           llvm::zip_equal(op->getResults(), op.inferResultTypes())) {
        // Only refinement: an inferred type less static than the current one,
        // or incompatible with it (invalid IR the verifier reports), is
        // skipped.
        if (succeeded(verifyCompatibleShape(result.getType(), inferred)) &&
            isMoreStatic(inferred, result.getType()))
          refine(result, inferred);
      }
    });

    auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
    function.setFunctionType(FunctionType::get(function.getContext(),
                                               entry.getArgumentTypes(),
                                               returnOp.getOperandTypes()));
    return success();
  }

  static bool isMoreStatic(Type candidate, Type current) {
    auto candidateTensor = dyn_cast<RankedTensorType>(candidate);
    if (!candidateTensor)
      return false;
    auto currentTensor = dyn_cast<RankedTensorType>(current);
    if (!currentTensor)
      return true;
    return candidateTensor != currentTensor &&
           candidateTensor.getNumDynamicDims() <=
               currentTensor.getNumDynamicDims();
  }

  /// Gives `value` the more static `type`. Users that cannot follow (anything
  /// but recur ops and func.return) keep the old type through a tensor.cast.
  void refine(Value value, Type type) {
    Type oldType = value.getType();
    value.setType(type);
    Value cast;
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      Operation *user = use.getOwner();
      if (isa<ResultTypeInference, func::ReturnOp>(user))
        continue;
      if (!cast) {
        OpBuilder builder(value.getContext());
        builder.setInsertionPointAfterValue(value);
        cast = tensor::CastOp::create(builder, value.getLoc(), oldType, value);
      }
      if (user != cast.getDefiningOp())
        use.set(cast);
    }
  }
};

} // namespace
