//===- RecurCellOps.cpp - recurrences of any cell
//--------------------------===//
//
// recur.rnn (a cell region) and the named cells recur.gru, recur.rnn_tanh
// and recur.rnn_relu: their verifiers, result types and builders.
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::detail;

//===----------------------------------------------------------------------===//
// Named cells: GRU, RNN
//===----------------------------------------------------------------------===//

/// A named cell's operands: `input [T, B, I]`, `w_ih [G·H, I]`, `w_hh [G·H,
/// H]`, the biases `[G·H]`, `h0 [B, H]`; the results' shapes, y [T, B, H]
/// and h_n [B, H].
static FailureOr<SmallVector<SymbolicShape>>
checkNamedCell(ShapeChecker &checker, int64_t gates, Type input, Type wIh,
               Type wHh, Type bIh, Type bHh, Type h0) {
  SmallVector<ExpectedOperand> operands = {
      {"input", input, {"T", "B", "I"}, false},
      {"w_ih", wIh, {{"H", gates}, "I"}, true},
      {"w_hh", wHh, {{"H", gates}, "H"}, true}};
  if (bIh)
    operands.push_back({"b_ih", bIh, {{"H", gates}}, true});
  if (bHh)
    operands.push_back({"b_hh", bHh, {{"H", gates}}, true});
  if (h0)
    operands.push_back({"h0", h0, {"B", "H"}, false});
  if (failed(checkFloatOperands(checker, operands)))
    return failure();
  return SmallVector<SymbolicShape>{{"T", "B", "H"}, {"B", "H"}};
}

template <typename CellOp>
static FailureOr<SmallVector<SymbolicShape>>
checkNamedCell(ShapeChecker &checker, CellOp op) {
  return checkNamedCell(checker, CellOp::kGates, op.getInput().getType(),
                        op.getWIh().getType(), op.getWHh().getType(),
                        typeOrNull(op.getBIh()), typeOrNull(op.getBHh()),
                        typeOrNull(op.getH0()));
}

template <typename CellOp> static LogicalResult verifyNamedCell(CellOp op) {
  if (bool(op.getBIh()) != bool(op.getBHh()))
    return op.emitOpError("takes both biases b_ih and b_hh or neither");
  if (failed(verifyLengths(op, op.getLengths(), op.getInput())))
    return failure();
  ShapeChecker checker = verifyingChecker(op);
  auto shapes = checkNamedCell(checker, op);
  if (failed(shapes) ||
      failed(verifyResults(op, checker, {"y", "h_n"}, *shapes)))
    return failure();
  if (op.getHiddenSize() < 1)
    return op.emitOpError() << "has " << op.getHiddenSize()
                            << " hidden units; a recurrence needs at least one";
  return success();
}

template <typename CellOp>
static SmallVector<Type> inferNamedCellTypes(CellOp op) {
  ShapeChecker checker;
  return resultTypes(op.getContext(), checker, checkNamedCell(checker, op), 2);
}

template <typename CellOp>
static void buildNamedCell(OpBuilder &builder, OperationState &state,
                           Value input, Value wIh, Value wHh, Value bIh,
                           Value bHh, Value h0, Value lengths, bool reverse) {
  ShapeChecker checker;
  SmallVector<Type> types =
      resultTypes(builder.getContext(), checker,
                  checkNamedCell(checker, CellOp::kGates, input.getType(),
                                 wIh.getType(), wHh.getType(), typeOrNull(bIh),
                                 typeOrNull(bHh), typeOrNull(h0)),
                  2);
  CellOp::build(builder, state, types[0], types[1], input, wIh, wHh, bIh, bHh,
                h0, lengths, reverse);
}

#define RECUR_NAMED_CELL(CellOp)                                               \
  LogicalResult CellOp::verify() { return verifyNamedCell(*this); }            \
  SmallVector<Type> CellOp::inferResultTypes() {                               \
    return inferNamedCellTypes(*this);                                         \
  }                                                                            \
  void CellOp::build(OpBuilder &builder, OperationState &state, Value input,   \
                     Value wIh, Value wHh, Value bIh, Value bHh, Value h0,     \
                     Value lengths, bool reverse) {                            \
    buildNamedCell<CellOp>(builder, state, input, wIh, wHh, bIh, bHh, h0,      \
                           lengths, reverse);                                  \
  }
RECUR_NAMED_CELL(GRUOp)
RECUR_NAMED_CELL(RNNTanhOp)
RECUR_NAMED_CELL(RNNReluOp)
#undef RECUR_NAMED_CELL

//===----------------------------------------------------------------------===//
// RNNOp
//===----------------------------------------------------------------------===//

/// Whether a value of type `actual` may stand where `expected` is: the same
/// element type and rank, and sizes equal where both are static.
static bool isCompatible(Type expected, Type actual) {
  auto a = dyn_cast<RankedTensorType>(expected);
  auto b = dyn_cast<RankedTensorType>(actual);
  if (!a || !b)
    return expected == actual;
  return a.getElementType() == b.getElementType() &&
         succeeded(verifyCompatibleShape(a.getShape(), b.getShape()));
}

/// Whether a cell argument of type `argument` may stand for `operand`:
/// compatible, and static in no dimension the operand leaves dynamic (the
/// cell would assume a size that nothing checks).
static bool isNoMoreStatic(Type argument, Type operand) {
  if (!isCompatible(argument, operand))
    return false;
  auto a = dyn_cast<RankedTensorType>(argument);
  auto o = dyn_cast<RankedTensorType>(operand);
  if (!a || !o)
    return true;
  for (auto [argumentSize, operandSize] : llvm::zip(a.getShape(), o.getShape()))
    if (ShapedType::isDynamic(operandSize) &&
        !ShapedType::isDynamic(argumentSize))
      return false;
  return true;
}

static constexpr const char *kLessStatic =
    " (a cell argument may be less static than what it stands for, not more)";

/// The types of a recurrence `op` (recur.rnn, recur.rnn_wavefront): x [T,
/// B, I] (a float tensor), each state [B, n], each final state its initial
/// value's type.
static LogicalResult verifyRecurrenceTypes(Operation *op, Value x,
                                           ValueRange init,
                                           ValueRange finalStates) {
  auto input = dyn_cast<RankedTensorType>(x.getType());
  if (!input || input.getRank() != 3 ||
      !isa<FloatType>(input.getElementType()) || input.isDynamicDim(2))
    return op->emitOpError("expects the input to be a float tensor [T, B, I] "
                           "with a static I, got ")
           << x.getType();
  for (auto [index, state] : llvm::enumerate(init)) {
    auto type = dyn_cast<RankedTensorType>(state.getType());
    if (!type || type.getRank() != 2 || type.isDynamicDim(1) ||
        failed(verifyCompatibleShape(ArrayRef<int64_t>{type.getDimSize(0)},
                                     ArrayRef<int64_t>{input.getDimSize(1)})))
      return op->emitOpError()
             << "expects state " << index
             << " to be a [B, n] tensor with the input's B and a static n, got "
             << state.getType();
  }
  if (finalStates.size() != init.size())
    return op->emitOpError() << "has " << init.size() << " states but "
                             << finalStates.size() << " final-state results";
  for (auto [index, state, result] : llvm::enumerate(init, finalStates))
    if (!isCompatible(state.getType(), result.getType()))
      return op->emitOpError()
             << "final state " << index << " has type " << result.getType()
             << ", its initial value " << state.getType();
  return success();
}

LogicalResult RNNOp::verify() {
  if (failed(verifyLengths(*this, getLengths(), getInput())))
    return failure();
  if (getLengthsSorted() && !getLengths())
    return emitOpError("is marked lengths_sorted but takes no lengths");
  return verifyRecurrenceTypes(*this, getInput(), getInit(), getFinalStates());
}

/// Checks the cell block `cell` of `op`, named `what` in errors: its
/// arguments stand for its input row `step` (of type `stepType`, that of
/// `stepSource`), the state
/// `init` and the `captures`; it ends with recur.yield of its y_t ([B, Y],
/// Y static, B the input row's) and new state; nothing in it has side
/// effects. Returns the yield.
static FailureOr<YieldOp> verifyCell(Operation *op, Block &cell,
                                     const Twine &what, StringRef step,
                                     const Twine &stepSource,
                                     RankedTensorType stepType, ValueRange init,
                                     ValueRange captures) {
  size_t states = init.size();
  size_t expected = 1 + states + captures.size();
  if (cell.getNumArguments() != expected)
    return op->emitOpError()
           << what << " takes " << cell.getNumArguments()
           << " arguments; expected " << expected << ": " << step << ", the "
           << states << " states and the " << captures.size() << " captures";
  if (!isNoMoreStatic(cell.getArgument(0).getType(), stepType))
    return op->emitOpError() << what << "'s " << step << " has type "
                             << cell.getArgument(0).getType() << "; "
                             << stepSource << " is " << stepType << kLessStatic;
  ValueRange stateArguments = cell.getArguments().slice(1, states);
  for (auto [index, operand, argument] : llvm::enumerate(init, stateArguments))
    if (!isNoMoreStatic(argument.getType(), operand.getType()))
      return op->emitOpError()
             << what << "'s state argument " << index << " has type "
             << argument.getType() << ", its initial value "
             << operand.getType() << kLessStatic;
  for (auto [index, operand, argument] :
       llvm::enumerate(captures, cell.getArguments().drop_front(1 + states)))
    if (!isNoMoreStatic(argument.getType(), operand.getType()))
      return op->emitOpError()
             << what << "'s capture argument " << index << " has type "
             << argument.getType() << ", the captured value "
             << operand.getType() << kLessStatic;
  auto yield = dyn_cast<YieldOp>(cell.getTerminator());
  if (!yield)
    return op->emitOpError() << what << " must end with recur.yield";
  if (yield.getValues().size() != 1 + states)
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values; the cell "
           << "yields y_t and its " << states << " states";
  auto output = dyn_cast<RankedTensorType>(yield.getValues()[0].getType());
  if (!output || output.getRank() != 2 || output.isDynamicDim(1) ||
      output.getElementType() != stepType.getElementType())
    return yield.emitOpError()
           << "yields y_t of type " << yield.getValues()[0].getType()
           << "; a step's output is [B, Y] (Y static) of "
           << stepType.getElementType();
  for (auto [index, value, argument, initial] :
       llvm::enumerate(yield.getValues().drop_front(), stateArguments, init))
    if (!isCompatible(argument.getType(), value.getType()) ||
        !isCompatible(initial.getType(), value.getType()))
      return yield.emitOpError()
             << "yields state " << index << " of type " << value.getType()
             << "; the cell takes it as " << argument.getType()
             << " and starts from " << initial.getType();
  // A thread may run a step twice and fusion reorders steps: nothing in the
  // cell may write or read memory.
  WalkResult walk = cell.walk([&](Operation *inner) {
    if (isMemoryEffectFree(inner))
      return WalkResult::advance();
    inner->emitOpError(
        "has side effects, which a recurrence cell may not have");
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  return yield;
}

/// Whether `y` is `[T, B, Y]`: the steps' `output` rows `[B, Y]` stacked
/// over the input's T and B (`input [T, B, ...]`).
static bool stacksSteps(Type y, RankedTensorType output,
                        RankedTensorType input) {
  return succeeded(
             verifyCompatibleShape(ArrayRef<int64_t>{output.getDimSize(0)},
                                   ArrayRef<int64_t>{input.getDimSize(1)})) &&
         isCompatible(
             RankedTensorType::get({input.getDimSize(0), input.getDimSize(1),
                                    output.getDimSize(1)},
                                   output.getElementType()),
             y);
}

LogicalResult RNNOp::verifyRegions() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto stepType = RankedTensorType::get(
      {input.getDimSize(1), input.getDimSize(2)}, input.getElementType());
  FailureOr<YieldOp> yield =
      verifyCell(*this, getCell(), "cell", "x_t", "the input's step", stepType,
                 getInit(), getCaptures());
  if (failed(yield))
    return failure();
  auto output = cast<RankedTensorType>(yield->getValues()[0].getType());
  if (!stacksSteps(getY().getType(), output, input))
    return yield->emitOpError()
           << "yields y_t of type " << output << ", which the result y "
           << getY().getType()
           << " does not stack ([B, Y] per step, Y static; [T, B, Y] in "
              "all)";
  return success();
}

SmallVector<Type> RNNOp::inferResultTypes() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto output = cast<RankedTensorType>(
      getCell().getTerminator()->getOperand(0).getType());
  SmallVector<Type> types = {RankedTensorType::get(
      {input.getDimSize(0), input.getDimSize(1), output.getDimSize(1)},
      input.getElementType())};
  llvm::append_range(types, getInit().getTypes());
  return types;
}

//===----------------------------------------------------------------------===//
// RNNWavefrontOp
//===----------------------------------------------------------------------===//

/// The first of layer `layer`'s entries in a list of `counts[l]` entries per
/// layer l.
static int64_t layerStart(ArrayRef<int64_t> counts, int64_t layer) {
  int64_t start = 0;
  for (int64_t count : counts.take_front(layer))
    start += count;
  return start;
}

OperandRange RNNWavefrontOp::getLayerInit(int64_t layer) {
  return getInit().slice(layerStart(getStateCounts(), layer),
                         getStateCounts()[layer]);
}

OperandRange RNNWavefrontOp::getLayerCaptures(int64_t layer) {
  return getCaptures().slice(layerStart(getCaptureCounts(), layer),
                             getCaptureCounts()[layer]);
}

Block::BlockArgListType RNNWavefrontOp::getStateArguments(int64_t layer) {
  return getCell(layer).getArguments().slice(1, getStateCounts()[layer]);
}

Block::BlockArgListType RNNWavefrontOp::getCaptureArguments(int64_t layer) {
  return getCell(layer).getArguments().drop_front(1 + getStateCounts()[layer]);
}

ResultRange RNNWavefrontOp::getLayerFinalStates(int64_t layer) {
  return getFinalStates().slice(layerStart(getStateCounts(), layer),
                                getStateCounts()[layer]);
}

OpOperand *RNNWavefrontOp::getCapturedOperand(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return nullptr;
  for (int64_t layer = 0; layer < getNumLayers(); ++layer) {
    unsigned first = 1 + getStateCounts()[layer];
    if (argument.getOwner() != &getCell(layer) ||
        argument.getArgNumber() < first)
      continue;
    return &getCapturesMutable()[layerStart(getCaptureCounts(), layer) +
                                 argument.getArgNumber() - first];
  }
  return nullptr;
}

/// The types as recur.rnn's, and the layers' counts: one per layer, summing
/// to the operands'.
LogicalResult RNNWavefrontOp::verify() {
  if (failed(verifyLengths(*this, getLengths(), getInput())) ||
      failed(verifyRecurrenceTypes(*this, getInput(), getInit(),
                                   getFinalStates())))
    return failure();
  int64_t layers = getLayers().size();
  if (layers < 2)
    return emitOpError() << "has " << layers
                         << " layers; a wavefront stacks at least 2";
  for (auto [name, counts, total] :
       {std::tuple{"state_counts", getStateCounts(), getInit().size()},
        std::tuple{"capture_counts", getCaptureCounts(),
                   getCaptures().size()}}) {
    if (int64_t(counts.size()) != layers)
      return emitOpError() << name << " has " << counts.size()
                           << " entries for " << layers << " layers";
    if (llvm::any_of(counts, [](int64_t count) { return count < 0; }) ||
        layerStart(counts, layers) != int64_t(total))
      return emitOpError() << name << " must be counts that sum to the "
                           << total << " operands";
  }
  return success();
}

LogicalResult RNNWavefrontOp::verifyRegions() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto stepType = RankedTensorType::get(
      {input.getDimSize(1), input.getDimSize(2)}, input.getElementType());
  RankedTensorType output;
  for (int64_t layer = 0; layer < getNumLayers(); ++layer) {
    FailureOr<YieldOp> yield =
        verifyCell(*this, getCell(layer), "layer " + Twine(layer) + "'s cell",
                   layer == 0 ? "x_t" : "input row",
                   layer == 0 ? Twine("the input's step")
                              : "layer " + Twine(layer - 1) + "'s y_t",
                   stepType, getLayerInit(layer), getLayerCaptures(layer));
    if (failed(yield))
      return failure();
    output = cast<RankedTensorType>(yield->getValues()[0].getType());
    if (failed(verifyCompatibleShape(ArrayRef<int64_t>{output.getDimSize(0)},
                                     ArrayRef<int64_t>{input.getDimSize(1)})))
      return yield->emitOpError()
             << "yields y_t of type " << output << " for the input's "
             << input.getDimSize(1) << " rows";
    // The next layer's input row.
    stepType = RankedTensorType::get(
        {input.getDimSize(1), output.getDimSize(1)}, output.getElementType());
  }
  if (!stacksSteps(getY().getType(), output, input))
    return emitOpError() << "has y of type " << getY().getType()
                         << ", which the last layer's y_t " << output
                         << " does not stack ([T, B, Y])";
  return success();
}

SmallVector<Type> RNNWavefrontOp::inferResultTypes() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto output = cast<RankedTensorType>(
      getCell(getNumLayers() - 1).getTerminator()->getOperand(0).getType());
  SmallVector<Type> types = {RankedTensorType::get(
      {input.getDimSize(0), input.getDimSize(1), output.getDimSize(1)},
      input.getElementType())};
  llvm::append_range(types, getInit().getTypes());
  return types;
}

OpOperand *mlir::recur::getCapturedOperand(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  Operation *owner = argument ? argument.getOwner()->getParentOp() : nullptr;
  if (auto rnn = dyn_cast_or_null<RNNOp>(owner))
    return rnn.getCapturedOperand(value);
  if (auto wavefront = dyn_cast_or_null<RNNWavefrontOp>(owner))
    return wavefront.getCapturedOperand(value);
  return nullptr;
}
