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
                           Value bHh, Value h0, bool reverse) {
  ShapeChecker checker;
  SmallVector<Type> types =
      resultTypes(builder.getContext(), checker,
                  checkNamedCell(checker, CellOp::kGates, input.getType(),
                                 wIh.getType(), wHh.getType(), typeOrNull(bIh),
                                 typeOrNull(bHh), typeOrNull(h0)),
                  2);
  CellOp::build(builder, state, types[0], types[1], input, wIh, wHh, bIh, bHh,
                h0, reverse);
}

#define RECUR_NAMED_CELL(CellOp)                                               \
  LogicalResult CellOp::verify() { return verifyNamedCell(*this); }            \
  SmallVector<Type> CellOp::inferResultTypes() {                               \
    return inferNamedCellTypes(*this);                                         \
  }                                                                            \
  void CellOp::build(OpBuilder &builder, OperationState &state, Value input,   \
                     Value wIh, Value wHh, Value bIh, Value bHh, Value h0,     \
                     bool reverse) {                                           \
    buildNamedCell<CellOp>(builder, state, input, wIh, wHh, bIh, bHh, h0,      \
                           reverse);                                           \
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

/// The recurrence's types: x [T, B, I] (a float tensor), each state [B, n].
LogicalResult RNNOp::verify() {
  auto input = dyn_cast<RankedTensorType>(getInput().getType());
  if (!input || input.getRank() != 3 ||
      !isa<FloatType>(input.getElementType()) || input.isDynamicDim(2))
    return emitOpError("expects the input to be a float tensor [T, B, I] with "
                       "a static I, got ")
           << getInput().getType();
  for (auto [index, state] : llvm::enumerate(getInit())) {
    auto type = dyn_cast<RankedTensorType>(state.getType());
    if (!type || type.getRank() != 2 || type.isDynamicDim(1) ||
        failed(verifyCompatibleShape(ArrayRef<int64_t>{type.getDimSize(0)},
                                     ArrayRef<int64_t>{input.getDimSize(1)})))
      return emitOpError() << "expects state " << index
                           << " to be a [B, n] tensor with the input's B and "
                              "a static n, got "
                           << state.getType();
  }
  if (getFinalStates().size() != getInit().size())
    return emitOpError() << "has " << getInit().size() << " states but "
                         << getFinalStates().size() << " final-state results";
  for (auto [index, state, result] :
       llvm::enumerate(getInit(), getFinalStates()))
    if (!isCompatible(state.getType(), result.getType()))
      return emitOpError() << "final state " << index << " has type "
                           << result.getType() << ", its initial value "
                           << state.getType();
  return success();
}

LogicalResult RNNOp::verifyRegions() {
  Block &cell = getCell();
  size_t states = getInit().size();
  size_t expected = 1 + states + getCaptures().size();
  if (cell.getNumArguments() != expected)
    return emitOpError() << "cell takes " << cell.getNumArguments()
                         << " arguments; expected " << expected << ": x_t, the "
                         << states << " states and the " << getCaptures().size()
                         << " captures";
  auto input = cast<RankedTensorType>(getInput().getType());
  auto stepType = RankedTensorType::get(
      {input.getDimSize(1), input.getDimSize(2)}, input.getElementType());
  if (!isNoMoreStatic(getStepInput().getType(), stepType))
    return emitOpError() << "cell's x_t has type " << getStepInput().getType()
                         << "; the input's step is " << stepType << kLessStatic;
  for (auto [index, operand, argument] :
       llvm::enumerate(getInit(), getStateArguments()))
    if (!isNoMoreStatic(argument.getType(), operand.getType()))
      return emitOpError() << "cell's state argument " << index << " has type "
                           << argument.getType() << ", its initial value "
                           << operand.getType() << kLessStatic;
  for (auto [index, operand, argument] :
       llvm::enumerate(getCaptures(), getCaptureArguments()))
    if (!isNoMoreStatic(argument.getType(), operand.getType()))
      return emitOpError() << "cell's capture argument " << index
                           << " has type " << argument.getType()
                           << ", the captured value " << operand.getType()
                           << kLessStatic;
  auto yield = dyn_cast<YieldOp>(cell.getTerminator());
  if (!yield)
    return emitOpError("cell must end with recur.yield");
  if (yield.getValues().size() != 1 + states)
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values; the cell "
           << "yields y_t and its " << states << " states";
  auto output = dyn_cast<RankedTensorType>(yield.getValues()[0].getType());
  auto y = dyn_cast<RankedTensorType>(getY().getType());
  if (!output || output.getRank() != 2 || output.isDynamicDim(1) || !y ||
      y.getRank() != 3 || output.getElementType() != input.getElementType() ||
      failed(verifyCompatibleShape(ArrayRef<int64_t>{output.getDimSize(0)},
                                   ArrayRef<int64_t>{input.getDimSize(1)})) ||
      !isCompatible(
          RankedTensorType::get(
              {input.getDimSize(0), input.getDimSize(1), output.getDimSize(1)},
              output.getElementType()),
          y))
    return yield.emitOpError()
           << "yields y_t of type " << yield.getValues()[0].getType()
           << ", which the result y " << getY().getType()
           << " does not stack ([B, Y] per step, Y static; [T, B, Y] in "
              "all)";
  for (auto [index, value, argument, init] : llvm::enumerate(
           yield.getValues().drop_front(), getStateArguments(), getInit()))
    if (!isCompatible(argument.getType(), value.getType()) ||
        !isCompatible(init.getType(), value.getType()))
      return yield.emitOpError()
             << "yields state " << index << " of type " << value.getType()
             << "; the cell takes it as " << argument.getType()
             << " and starts from " << init.getType();
  // A thread may run a step twice and fusion reorders steps: nothing in the
  // cell may write or read memory.
  WalkResult walk = cell.walk([&](Operation *op) {
    if (isMemoryEffectFree(op))
      return WalkResult::advance();
    op->emitOpError("has side effects, which a recurrence cell may not have");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
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
