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
#include "recur/Utils/TensorCasts.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// A zero tensor shaped like `like`.
Value zerosLike(OpBuilder &builder, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(tensor::DimOp::create(builder, loc, like, dim));
  Value empty = tensor::EmptyOp::create(builder, loc, type, sizes);
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getFloatAttr(type.getElementType(), 0.0));
  return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
}

/// Reverse-mode sweep over `body`'s ops: from the seeds in `gradients`
/// (result values to their gradients), each op on the path from an `active`
/// value builds its operands' gradients with its Differentiable rule, at
/// `builder`'s insertion point; gradients of a value used twice are summed.
/// On return `gradients` holds every reached value's gradient.
/// `path` says from what to what, for the error on an op without a rule.
LogicalResult backpropagate(Block &body, const DenseSet<Value> &active,
                            DenseMap<Value, Value> &gradients,
                            OpBuilder &builder, Location loc, StringRef path) {
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
    // A recurrence keeping its states gives its y_t as a slice of its y
    // (keepCellStates): the rest of the gradient is zero.
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      if (active.contains(slice.getSource()))
        accumulate(slice.getSource(),
                   tensor::InsertSliceOp::create(
                       builder, loc, resultGradients[0],
                       zerosLike(builder, loc, slice.getSource()),
                       slice.getMixedOffsets(), slice.getMixedSizes(),
                       slice.getMixedStrides()));
      continue;
    }
    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      if (active.contains(cast.getSource()))
        accumulate(cast.getSource(), castTo(builder, loc, resultGradients[0],
                                            cast.getSource().getType()));
      continue;
    }
    auto differentiable = dyn_cast<Differentiable>(op);
    if (!differentiable)
      return op->emitOpError()
             << "is on the path from " << path
             << ", and recur-differentiate has no gradient rule for it";
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
  return success();
}

/// The name of argument `index` (its recur.input or recur.weight), or "".
StringRef argumentName(func::FuncOp function, unsigned index) {
  for (StringRef attr :
       {RecurDialect::kInputAttrName, RecurDialect::kWeightAttrName})
    if (auto name = function.getArgAttrOfType<StringAttr>(index, attr))
      return name.getValue();
  return "";
}

/// Makes every recur.rnn that the float arguments reach keep the states
/// that enter each of its steps, after y_t in its y (the cell yields
/// `concat(y_t, states...)`; its old y is a slice of the new), so that its
/// backward reads them instead of running the recurrence again. With
/// `returnThem`, each is also a kept result of `function`, `kept_states_<k>`
/// for the k-th recurrence: what a `recur.vjp` function takes back, and its
/// `recur.keep_activations` forward returns.
LogicalResult keepCellStates(func::FuncOp function, bool returnThem) {
  Block &body = function.getBody().front();
  // A named cell its own rule does not cover (an LSTM's projection, a
  // reverse direction) is differentiated as the recur.rnn of its cell.
  SmallVector<Operation *> uncovered;
  for (Operation &op : body) {
    auto lstm = dyn_cast<LSTMOp>(op);
    if ((lstm && (lstm.getWHr() || lstm.getReverse())) ||
        (isa<GRUOp, RNNTanhOp, RNNReluOp>(op) &&
         op.hasAttrOfType<UnitAttr>("reverse")))
      uncovered.push_back(&op);
  }
  IRRewriter rewriter(function.getContext());
  for (Operation *op : uncovered)
    generalizeCell(op, rewriter);
  DenseSet<Value> active;
  for (BlockArgument arg : body.getArguments())
    if (isa<FloatType>(getElementTypeOrSelf(arg.getType())))
      active.insert(arg);
  SmallVector<RNNOp> recurrences;
  for (Operation &op : body) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());
    if (auto rnn = dyn_cast<RNNOp>(op); rnn && active.contains(rnn.getY()))
      recurrences.push_back(rnn);
  }
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  MLIRContext *context = function.getContext();
  for (auto [index, rnn] : llvm::enumerate(recurrences)) {
    RNNOp kept = rnn;
    if (!rnn.getKeptStatesOffset()) {
      OpBuilder builder(rnn);
      Location loc = rnn.getLoc();
      kept = rnn.cloneKeepingStates(builder);
      auto yType = cast<RankedTensorType>(rnn.getY().getType());
      Value y = tensor::ExtractSliceOp::create(
          builder, loc, kept.getY(),
          ArrayRef<OpFoldResult>(
              SmallVector<OpFoldResult>(3, builder.getIndexAttr(0))),
          ArrayRef<OpFoldResult>{
              tensor::getMixedSize(builder, loc, kept.getY(), 0),
              tensor::getMixedSize(builder, loc, kept.getY(), 1),
              builder.getIndexAttr(yType.getDimSize(2))},
          ArrayRef<OpFoldResult>(
              SmallVector<OpFoldResult>(3, builder.getIndexAttr(1))));
      rnn.getY().replaceAllUsesWith(castTo(builder, loc, y, yType));
      rnn.getFinalStates().replaceAllUsesWith(kept.getFinalStates());
      rnn.erase();
    }
    if (!returnThem)
      continue;
    unsigned position = function.getNumResults();
    NamedAttribute attrs[] = {
        NamedAttribute(
            StringAttr::get(context, RecurDialect::kOutputAttrName),
            StringAttr::get(context, "kept_states_" + std::to_string(index))),
        NamedAttribute(StringAttr::get(context, RecurDialect::kKeptAttrName),
                       UnitAttr::get(context))};
    if (failed(function.insertResult(position, kept.getY().getType(),
                                     DictionaryAttr::get(context, attrs))))
      return failure();
    terminator.getOperandsMutable().append(kept.getY());
  }
  return success();
}

/// `recur.vjp`: rewrites `forward(args) -> results` into its vector-Jacobian
/// product, `(args, kept results, d_results) -> d_args`. Every float result
/// `r` but the kept activations (`recur.kept`) gets an argument `d_r` (its
/// gradient, from any loss) and every float argument `a` a result `d_a`. The
/// backward reads the forward's results from arguments named as the results
/// (the caller kept them); whatever else it reads of the forward is recomputed,
/// and forward ops it does not read are erased.
LogicalResult vectorJacobianProduct(func::FuncOp function) {
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "a function to differentiate must have a single block";
  if (failed(keepCellStates(function, /*returnThem=*/true)))
    return failure();
  Block &body = function.getBody().front();
  SmallVector<BlockArgument> floats;
  for (BlockArgument arg : body.getArguments()) {
    Type element = getElementTypeOrSelf(arg.getType());
    if (!isa<FloatType>(element))
      continue;
    if (!element.isF32())
      return function.emitError()
             << "gradients are compiled in f32 only, got a " << element
             << " argument '" << argumentName(function, arg.getArgNumber())
             << "'";
    floats.push_back(arg);
  }
  DenseSet<Value> active;
  for (BlockArgument arg : floats)
    active.insert(arg);
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());
  DenseSet<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.insert(&op);

  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  Location loc = function.getLoc();
  MLIRContext *context = function.getContext();
  auto named = [&](StringRef attr, const Twine &name) {
    return DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, attr),
                                 StringAttr::get(context, name))});
  };
  auto outputName = [&](unsigned index) -> std::string {
    auto name = function.getResultAttrOfType<StringAttr>(
        index, RecurDialect::kOutputAttrName);
    return name ? name.str() : "result" + std::to_string(index);
  };
  // The seeds: d_<output> for every float result.
  unsigned numOriginal = function.getNumArguments();
  DenseMap<Value, Value> gradients;
  OpBuilder builder(terminator);
  SmallVector<Value> results(terminator.getOperands());
  for (auto [index, result] : llvm::enumerate(results)) {
    // A kept activation is an output for the backward only: no gradient.
    if (!isa<FloatType>(getElementTypeOrSelf(result.getType())) ||
        function.getResultAttr(index, RecurDialect::kKeptAttrName))
      continue;
    unsigned position = function.getNumArguments();
    if (failed(function.insertArgument(
            position, result.getType(),
            named(RecurDialect::kInputAttrName, "d_" + outputName(index)),
            loc)))
      return failure();
    Value seed = function.getArgument(position);
    Value &sum = gradients[result];
    sum =
        sum ? arith::AddFOp::create(builder, loc, sum, seed).getResult() : seed;
  }
  if (failed(backpropagate(body, active, gradients, builder, loc,
                           "the arguments to the results")))
    return failure();

  SmallVector<Value> argumentGradients;
  SmallVector<DictionaryAttr> resultAttrs;
  for (BlockArgument arg : floats) {
    Value gradient = gradients.lookup(arg);
    // Two results may be one value (an LSTM's biases share their gradient):
    // the runtime hands the second out as a copy.
    argumentGradients.push_back(gradient ? gradient
                                         : zerosLike(builder, loc, arg));
    resultAttrs.push_back(
        named(RecurDialect::kOutputAttrName,
              "d_" + argumentName(function, arg.getArgNumber())));
  }

  // The forward's results, as the caller kept them, for the backward's reads.
  auto isBackward = [&](OpOperand &use) {
    return !forward.contains(use.getOwner()) && use.getOwner() != terminator;
  };
  // Kept results come after the original arguments, before the seeds.
  unsigned keptPosition = numOriginal;
  DenseSet<Value> kept;
  for (auto [index, result] : llvm::enumerate(results)) {
    if (isa<BlockArgument>(result) || !kept.insert(result).second ||
        llvm::none_of(result.getUses(), isBackward))
      continue;
    if (failed(function.insertArgument(
            keptPosition, result.getType(),
            named(RecurDialect::kInputAttrName, outputName(index)), loc)))
      return failure();
    result.replaceUsesWithIf(function.getArgument(keptPosition++), isBackward);
  }

  func::ReturnOp::create(builder, terminator.getLoc(), argumentGradients);
  terminator.erase();
  // The forward ops the backward does not read, and what the rules built
  // but did not use (a recurrence reads y_t's gradient without its padding).
  eraseUnusedOps(body);
  function.setFunctionType(
      FunctionType::get(context, body.getArgumentTypes(),
                        ValueRange(argumentGradients).getTypes()));
  function.setAllResultAttrs(resultAttrs);
  function->removeAttr(RecurDialect::kVjpAttrName);
  function->setAttr(RecurDialect::kBackwardAttrName, UnitAttr::get(context));
  return success();
}

struct DifferentiatePass
    : mlir::recur::impl::DifferentiateBase<DifferentiatePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function->hasAttr(RecurDialect::kKeepActivationsAttrName)) {
      if (!function.getBody().hasOneBlock() ||
          failed(keepCellStates(function, /*returnThem=*/true)))
        return signalPassFailure();
      function->removeAttr(RecurDialect::kKeepActivationsAttrName);
      return;
    }
    if (function->hasAttr(RecurDialect::kVjpAttrName)) {
      if (failed(vectorJacobianProduct(function)))
        signalPassFailure();
      return;
    }
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
    if (failed(checkTrainingStep(function)) ||
        failed(keepCellStates(function, /*returnThem=*/false)))
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
    if (failed(backpropagate(body, active, gradients, builder, loc,
                             "the weights to the loss")))
      return failure();

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
