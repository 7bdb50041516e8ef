//===- Differentiate.cpp - a training step's backward pass and update -----===//
//
// Reverse-mode differentiation at the recur level: the forward ops stay as
// they are (fusion applies to them as to any model), and the gradient ops
// each one's Differentiable rule builds are placed after them in reverse
// order, then the clipping and the updates, last, so that every read of a
// weight comes before its in-place update.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::recur {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// The weights, in argument order, with their names.
struct Weight {
  BlockArgument value;
  StringAttr name;
};

LogicalResult checkTrainingStep(func::FuncOp function) {
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "a training step must have a single block to differentiate";
  if (function.getNumResults() != 1 ||
      !isa<RankedTensorType>(function.getResultTypes()[0]) ||
      cast<RankedTensorType>(function.getResultTypes()[0]).getRank() != 0)
    return function.emitError()
           << "a training step returns one value, the loss (a rank-0 "
              "tensor); @"
           << function.getSymName() << " returns "
           << function.getFunctionType().getResults();
  for (Type type : function.getArgumentTypes()) {
    Type element = getElementTypeOrSelf(type);
    if (isa<FloatType>(element) && !element.isF32())
      return function.emitError()
             << "training steps are compiled in f32 only, got a " << element
             << " argument (recur-gen --train --dtype f32)";
  }
  return success();
}

/// Values that depend on a weight: the only ones whose gradient is needed.
DenseSet<Value> activeValues(Block &body, ArrayRef<Weight> weights) {
  DenseSet<Value> active;
  for (const Weight &weight : weights)
    active.insert(weight.value);
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());
  return active;
}

struct DifferentiatePass
    : mlir::recur::impl::DifferentiateBase<DifferentiatePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    auto sgd = function->getAttrOfType<SGDAttr>(RecurDialect::kTrainAttrName);
    if (!sgd)
      return;
    // Already differentiated (it returns its updates): the pipeline accepts
    // the IR printed after this stage as it accepts the model.
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      if (function.getResultAttr(i, RecurDialect::kUpdateAttrName))
        return;
    if (failed(differentiate(function, sgd)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp function, SGDAttr sgd) {
    if (failed(checkTrainingStep(function)))
      return failure();
    Block &body = function.getBody().front();
    SmallVector<Weight> weights;
    for (BlockArgument arg : body.getArguments())
      if (auto name = function.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), RecurDialect::kWeightAttrName))
        weights.push_back({arg, name});
    DenseSet<Value> active = activeValues(body, weights);

    auto terminator = cast<func::ReturnOp>(body.getTerminator());
    Value loss = terminator.getOperand(0);
    OpBuilder builder(terminator);
    Location loc = function.getLoc();
    DenseMap<Value, Value> gradients;
    auto lossType = cast<RankedTensorType>(loss.getType());
    gradients[loss] = arith::ConstantOp::create(
        builder, loc, lossType,
        DenseElementsAttr::get(
            lossType, builder.getFloatAttr(lossType.getElementType(), 1.0)));
    auto accumulate = [&](Value value, Value gradient) {
      Value &sum = gradients[value];
      sum = sum ? arith::AddFOp::create(builder, loc, sum, gradient).getResult()
                : gradient;
    };

    // Reverse program order visits every user of a value before the value's
    // definition, so its gradient is complete when its op is reached.
    SmallVector<Operation *> forward = llvm::map_to_vector(
        body.without_terminator(), [](Operation &op) { return &op; });
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGradients = llvm::map_to_vector(
          op->getResults(), [&](Value r) { return gradients.lookup(r); });
      if (llvm::all_of(resultGradients, [](Value g) { return !g; }))
        continue;
      auto differentiable = dyn_cast<Differentiable>(op);
      if (!differentiable)
        return op->emitOpError()
               << "is on the path from the weights to the loss, and "
                  "recur-differentiate has no gradient rule for it";
      SmallVector<bool> needed = llvm::map_to_vector(
          op->getOperands(), [&](Value v) { return active.contains(v); });
      SmallVector<Value> operandGradients;
      if (failed(differentiable.buildGradients(builder, resultGradients, needed,
                                               operandGradients)))
        return failure();
      for (auto [operand, gradient] :
           llvm::zip_equal(op->getOperands(), operandGradients))
        if (gradient)
          accumulate(operand, gradient);
    }

    SmallVector<Weight> trained;
    SmallVector<Value> weightGradients;
    for (const Weight &weight : weights)
      if (Value gradient = gradients.lookup(weight.value)) {
        trained.push_back(weight);
        weightGradients.push_back(gradient);
      }
    if (trained.empty())
      return function.emitError()
             << "the loss depends on no weight: nothing to train";
    if (double maxNorm = sgd.getMaxNorm(); maxNorm > 0)
      weightGradients = llvm::to_vector_of<Value>(
          ClipGradNormOp::create(builder, loc, weightGradients, maxNorm)
              .getClipped());

    SmallVector<Value> results = {loss};
    for (auto [weight, gradient] : llvm::zip_equal(trained, weightGradients))
      results.push_back(SGDUpdateOp::create(
          builder, loc, weight.value.getType(), weight.value, gradient,
          builder.getF64FloatAttr(sgd.getLearningRate())));
    func::ReturnOp::create(builder, terminator.getLoc(), results);
    terminator.erase();
    SmallVector<DictionaryAttr> resultAttrs = {function.getResultAttrDict(0)};
    for (const Weight &weight : trained)
      resultAttrs.push_back(builder.getDictionaryAttr(
          builder.getNamedAttr(RecurDialect::kUpdateAttrName, weight.name)));
    function.setFunctionType(builder.getFunctionType(
        function.getArgumentTypes(), ValueRange(results).getTypes()));
    function.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
