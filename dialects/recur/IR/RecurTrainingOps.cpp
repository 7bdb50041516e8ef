//===- RecurTrainingOps.cpp - gradients and the update --------------------===//
//
// The ops recur-differentiate emits: the gradients of cross_entropy,
// linear, lstm and embedding, clip_grad_norm and sgd_update
// (OpVerification.h).
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::detail;

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

/// Builds an op's result types from its signature function, with unranked
/// placeholders where the operands are invalid.
template <typename Check>
static SmallVector<Type> inferredTypes(MLIRContext *context,
                                       unsigned numResults, Check check) {
  ShapeChecker checker;
  return resultTypes(context, checker, check(checker), numResults);
}

static FailureOr<SmallVector<SymbolicShape>>
checkCrossEntropyGrad(ShapeChecker &checker, Type logits, Type targets,
                      Type dLoss, Reduction reduction) {
  auto lossShape = checkCrossEntropy(checker, logits, targets, reduction);
  if (failed(lossShape) ||
      failed(checkFloatOperands(
          checker, {{"d_loss", dLoss, lossShape->front(), false}})))
    return failure();
  SymbolicShape logitsShape =
      leadingDims(cast<RankedTensorType>(logits).getRank() - 1);
  logitsShape.emplace_back("C");
  return SmallVector<SymbolicShape>{logitsShape};
}

LogicalResult CrossEntropyGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkCrossEntropyGrad(checker, getLogits().getType(),
                                      getTargets().getType(),
                                      getDLoss().getType(), getReduction());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"d_logits"}, *shapes)));
}

SmallVector<Type> CrossEntropyGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 1, [&](ShapeChecker &checker) {
    return checkCrossEntropyGrad(checker, getLogits().getType(),
                                 getTargets().getType(), getDLoss().getType(),
                                 getReduction());
  });
}

void CrossEntropyGradOp::build(OpBuilder &builder, OperationState &state,
                               Value logits, Value targets, Value dLoss,
                               Reduction reduction) {
  auto types = inferredTypes(builder.getContext(), 1, [&](ShapeChecker &c) {
    return checkCrossEntropyGrad(c, logits.getType(), targets.getType(),
                                 dLoss.getType(), reduction);
  });
  build(builder, state, types.front(), logits, targets, dLoss, reduction);
}

static FailureOr<SmallVector<SymbolicShape>>
checkLinearGrad(ShapeChecker &checker, Type dResult, Type input, Type weight) {
  FailureOr<int64_t> rank =
      checker.checkRankAtLeast(operandName("input"), input, 1);
  if (failed(rank))
    return failure();
  SymbolicShape inputShape = leadingDims(*rank - 1);
  SymbolicShape resultShape = inputShape;
  inputShape.emplace_back("K");
  resultShape.emplace_back("N");
  if (failed(checkFloatOperands(checker,
                                {{"input", input, inputShape, false},
                                 {"weight", weight, {"N", "K"}, true},
                                 {"d_result", dResult, resultShape, false}})))
    return failure();
  return SmallVector<SymbolicShape>{inputShape, {"N", "K"}, {"N"}};
}

LogicalResult LinearGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkLinearGrad(checker, getDResult().getType(),
                                getInput().getType(), getWeight().getType());
  return failure(
      failed(shapes) ||
      failed(verifyResults(*this, checker, {"d_input", "d_weight", "d_bias"},
                           *shapes)));
}

SmallVector<Type> LinearGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 3, [&](ShapeChecker &checker) {
    return checkLinearGrad(checker, getDResult().getType(),
                           getInput().getType(), getWeight().getType());
  });
}

void LinearGradOp::build(OpBuilder &builder, OperationState &state,
                         Value dResult, Value input, Value weight) {
  auto types = inferredTypes(builder.getContext(), 3, [&](ShapeChecker &c) {
    return checkLinearGrad(c, dResult.getType(), input.getType(),
                           weight.getType());
  });
  build(builder, state, types, dResult, input, weight);
}

/// The operand types of recur.lstm_grad, the optional ones null when absent.
struct LSTMGradTypes {
  Type input, wIh, wHh, bIh, bHh, y, dY, h0, c0, dHN, dCN;
};

static FailureOr<SmallVector<SymbolicShape>>
checkLSTMGrad(ShapeChecker &checker, const LSTMGradTypes &types) {
  SmallVector<ExpectedOperand> operands = {
      {"input", types.input, {"T", "B", "I"}, false},
      {"w_ih", types.wIh, {{"H", 4}, "I"}, true},
      {"w_hh", types.wHh, {{"H", 4}, "H"}, true}};
  if (types.bIh)
    operands.push_back({"b_ih", types.bIh, {{"H", 4}}, true});
  if (types.bHh)
    operands.push_back({"b_hh", types.bHh, {{"H", 4}}, true});
  operands.push_back({"y", types.y, {"T", "B", "H"}, false});
  if (types.dY)
    operands.push_back({"d_y", types.dY, {"T", "B", "H"}, false});
  std::pair<StringRef, Type> states[] = {{"h0", types.h0},
                                         {"c0", types.c0},
                                         {"d_h_n", types.dHN},
                                         {"d_c_n", types.dCN}};
  for (auto [name, type] : states)
    if (type)
      operands.push_back({name, type, {"B", "H"}, false});
  if (failed(checkFloatOperands(checker, operands)))
    return failure();
  return SmallVector<SymbolicShape>{{"T", "B", "I"}, {{"H", 4}, "I"},
                                    {{"H", 4}, "H"}, {{"H", 4}},
                                    {"B", "H"},      {"B", "H"}};
}

static LSTMGradTypes typesOf(Value input, Value wIh, Value wHh, Value bIh,
                             Value bHh, Value y, Value dY, Value h0, Value c0,
                             Value dHN, Value dCN) {
  return {input.getType(), wIh.getType(),   wHh.getType(),  typeOrNull(bIh),
          typeOrNull(bHh), y.getType(),     typeOrNull(dY), typeOrNull(h0),
          typeOrNull(c0),  typeOrNull(dHN), typeOrNull(dCN)};
}

LogicalResult LSTMGradOp::verify() {
  if (bool(getBIh()) != bool(getBHh()))
    return emitOpError("takes both biases b_ih and b_hh or neither");
  if (failed(verifyLengths(*this, getLengths(), getInput())))
    return failure();
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkLSTMGrad(
      checker, typesOf(getInput(), getWIh(), getWHh(), getBIh(), getBHh(),
                       getY(), getDY(), getH0(), getC0(), getDHN(), getDCN()));
  if (failed(shapes) ||
      failed(verifyResults(
          *this, checker,
          {"d_input", "d_w_ih", "d_w_hh", "d_bias", "d_h0", "d_c0"}, *shapes)))
    return failure();
  return verifyUnitCounts(*this,
                          cast<ShapedType>(getWHh().getType()).getDimSize(1));
}

SmallVector<Type> LSTMGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 6, [&](ShapeChecker &checker) {
    return checkLSTMGrad(checker,
                         typesOf(getInput(), getWIh(), getWHh(), getBIh(),
                                 getBHh(), getY(), getDY(), getH0(), getC0(),
                                 getDHN(), getDCN()));
  });
}

void LSTMGradOp::build(OpBuilder &builder, OperationState &state, Value input,
                       Value wIh, Value wHh, Value bIh, Value bHh, Value y,
                       Value dY, Value h0, Value c0, Value dHN, Value dCN,
                       Value lengths) {
  auto types = inferredTypes(builder.getContext(), 6, [&](ShapeChecker &c) {
    return checkLSTMGrad(
        c, typesOf(input, wIh, wHh, bIh, bHh, y, dY, h0, c0, dHN, dCN));
  });
  build(builder, state, types, input, wIh, wHh, bIh, bHh, y, dY, h0, c0, dHN,
        dCN, lengths);
}

/// The operand types of recur.gru_grad, the optional ones null when absent.
struct GRUGradTypes {
  Type input, wIh, wHh, bIh, bHh, y, dY, h0, dHN;
};

static FailureOr<SmallVector<SymbolicShape>>
checkGRUGrad(ShapeChecker &checker, const GRUGradTypes &types) {
  SmallVector<ExpectedOperand> operands = {
      {"input", types.input, {"T", "B", "I"}, false},
      {"w_ih", types.wIh, {{"H", 3}, "I"}, true},
      {"w_hh", types.wHh, {{"H", 3}, "H"}, true}};
  if (types.bIh)
    operands.push_back({"b_ih", types.bIh, {{"H", 3}}, true});
  if (types.bHh)
    operands.push_back({"b_hh", types.bHh, {{"H", 3}}, true});
  operands.push_back({"y", types.y, {"T", "B", "H"}, false});
  if (types.dY)
    operands.push_back({"d_y", types.dY, {"T", "B", "H"}, false});
  if (types.h0)
    operands.push_back({"h0", types.h0, {"B", "H"}, false});
  if (types.dHN)
    operands.push_back({"d_h_n", types.dHN, {"B", "H"}, false});
  if (failed(checkFloatOperands(checker, operands)))
    return failure();
  return SmallVector<SymbolicShape>{{"T", "B", "I"}, {{"H", 3}, "I"},
                                    {{"H", 3}, "H"}, {{"H", 3}},
                                    {{"H", 3}},      {"B", "H"}};
}

static GRUGradTypes gruGradTypes(Value input, Value wIh, Value wHh, Value bIh,
                                 Value bHh, Value y, Value dY, Value h0,
                                 Value dHN) {
  return {input.getType(), wIh.getType(),   wHh.getType(),
          typeOrNull(bIh), typeOrNull(bHh), y.getType(),
          typeOrNull(dY),  typeOrNull(h0),  typeOrNull(dHN)};
}

LogicalResult GRUGradOp::verify() {
  if (bool(getBIh()) != bool(getBHh()))
    return emitOpError("takes both biases b_ih and b_hh or neither");
  if (failed(verifyLengths(*this, getLengths(), getInput())))
    return failure();
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkGRUGrad(
      checker, gruGradTypes(getInput(), getWIh(), getWHh(), getBIh(), getBHh(),
                            getY(), getDY(), getH0(), getDHN()));
  if (failed(shapes) || failed(verifyResults(*this, checker,
                                             {"d_input", "d_w_ih", "d_w_hh",
                                              "d_b_ih", "d_b_hh", "d_h0"},
                                             *shapes)))
    return failure();
  int64_t hidden = cast<ShapedType>(getWHh().getType()).getDimSize(1);
  if (hidden < 1)
    return emitOpError() << "has " << hidden
                         << " hidden units; a recurrence needs at least one";
  return success();
}

SmallVector<Type> GRUGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 6, [&](ShapeChecker &checker) {
    return checkGRUGrad(checker, gruGradTypes(getInput(), getWIh(), getWHh(),
                                              getBIh(), getBHh(), getY(),
                                              getDY(), getH0(), getDHN()));
  });
}

void GRUGradOp::build(OpBuilder &builder, OperationState &state, Value input,
                      Value wIh, Value wHh, Value bIh, Value bHh, Value y,
                      Value dY, Value h0, Value dHN, Value lengths) {
  auto types = inferredTypes(builder.getContext(), 6, [&](ShapeChecker &c) {
    return checkGRUGrad(
        c, gruGradTypes(input, wIh, wHh, bIh, bHh, y, dY, h0, dHN));
  });
  build(builder, state, types, input, wIh, wHh, bIh, bHh, y, dY, h0, dHN,
        lengths);
}

static FailureOr<SmallVector<SymbolicShape>>
checkRNNGrad(ShapeChecker &checker, Type input, Type wIh, Type wHh, Type y,
             Type dY, Type h0, Type dHN) {
  SmallVector<ExpectedOperand> operands = {
      {"input", input, {"T", "B", "I"}, false},
      {"w_ih", wIh, {"H", "I"}, true},
      {"w_hh", wHh, {"H", "H"}, true},
      {"y", y, {"T", "B", "H"}, false}};
  if (dY)
    operands.push_back({"d_y", dY, {"T", "B", "H"}, false});
  if (h0)
    operands.push_back({"h0", h0, {"B", "H"}, false});
  if (dHN)
    operands.push_back({"d_h_n", dHN, {"B", "H"}, false});
  if (failed(checkFloatOperands(checker, operands)))
    return failure();
  return SmallVector<SymbolicShape>{
      {"T", "B", "I"}, {"H", "I"}, {"H", "H"}, {"H"}, {"B", "H"}};
}

LogicalResult RNNGradOp::verify() {
  if (failed(verifyLengths(*this, getLengths(), getInput())))
    return failure();
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes =
      checkRNNGrad(checker, getInput().getType(), getWIh().getType(),
                   getWHh().getType(), getY().getType(), typeOrNull(getDY()),
                   typeOrNull(getH0()), typeOrNull(getDHN()));
  return success(
      succeeded(shapes) &&
      succeeded(verifyResults(*this, checker,
                              {"d_input", "d_w_ih", "d_w_hh", "d_bias", "d_h0"},
                              *shapes)));
}

SmallVector<Type> RNNGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 5, [&](ShapeChecker &checker) {
    return checkRNNGrad(checker, getInput().getType(), getWIh().getType(),
                        getWHh().getType(), getY().getType(),
                        typeOrNull(getDY()), typeOrNull(getH0()),
                        typeOrNull(getDHN()));
  });
}

void RNNGradOp::build(OpBuilder &builder, OperationState &state, Value input,
                      Value wIh, Value wHh, Value y, Value dY, Value h0,
                      Value dHN, Value lengths, bool relu) {
  auto types = inferredTypes(builder.getContext(), 5, [&](ShapeChecker &c) {
    return checkRNNGrad(c, input.getType(), wIh.getType(), wHh.getType(),
                        y.getType(), typeOrNull(dY), typeOrNull(h0),
                        typeOrNull(dHN));
  });
  build(builder, state, types, input, wIh, wHh, y, dY, h0, dHN, lengths, relu);
}

static FailureOr<SmallVector<SymbolicShape>>
checkEmbeddingGrad(ShapeChecker &checker, Type dResult, Type ids,
                   int64_t rows) {
  FailureOr<int64_t> idsRank =
      checker.checkRankAtLeast(operandName("ids"), ids, 0);
  if (failed(idsRank) ||
      failed(checker.checkElementType(operandName("ids"), ids,
                                      IntegerType::get(ids.getContext(), 64))))
    return failure();
  SymbolicShape idsShape = leadingDims(*idsRank);
  SymbolicShape dResultShape = idsShape;
  dResultShape.emplace_back("E");
  if (failed(checker.checkShape(operandName("ids"), ids, idsShape)) ||
      failed(checkFloatOperands(checker,
                                {{"d_result", dResult, dResultShape, false}})))
    return failure();
  if (ShapedType::isDynamic(checker.sizesOf({"E"}).front()))
    return checker.fail(operandName("d_result"),
                        " must have a static last dimension (the table's "
                        "columns E), got ",
                        dResult);
  checker.assumeSize("V", rows);
  return SmallVector<SymbolicShape>{{"V", "E"}};
}

LogicalResult EmbeddingGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkEmbeddingGrad(checker, getDResult().getType(),
                                   getIds().getType(), getRows());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"d_table"}, *shapes)));
}

SmallVector<Type> EmbeddingGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 1, [&](ShapeChecker &checker) {
    return checkEmbeddingGrad(checker, getDResult().getType(),
                              getIds().getType(), getRows());
  });
}

void EmbeddingGradOp::build(OpBuilder &builder, OperationState &state,
                            Value dResult, Value ids, int64_t rows) {
  auto types = inferredTypes(builder.getContext(), 1, [&](ShapeChecker &c) {
    return checkEmbeddingGrad(c, dResult.getType(), ids.getType(), rows);
  });
  build(builder, state, types.front(), dResult, ids, rows);
}

/// The norm's type, then each gradient's own, or failure.
static FailureOr<SmallVector<Type>> checkClipGradNorm(ShapeChecker &checker,
                                                      TypeRange gradients) {
  if (gradients.empty())
    return checker.fail("needs at least one gradient");
  SmallVector<Type> types;
  for (auto [index, type] : llvm::enumerate(gradients)) {
    std::string what = operandName("gradients") + " #" + std::to_string(index);
    if (failed(checker.checkRankAtLeast(what, type, 0)) ||
        failed(checker.checkFloatElementType(what, type)))
      return failure();
    if (types.empty())
      types.push_back(
          RankedTensorType::get({}, cast<ShapedType>(type).getElementType()));
    types.push_back(type);
  }
  return types;
}

LogicalResult ClipGradNormOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto types = checkClipGradNorm(checker, getGradients().getTypes());
  if (failed(types))
    return failure();
  if (getNumResults() != types->size())
    return emitOpError() << "expected " << types->size()
                         << " results (the norm, then one per gradient), got "
                         << getNumResults();
  for (auto [index, result, expected] : llvm::enumerate(getResults(), *types))
    if (result.getType() != expected)
      return emitOpError() << "result #" << index << " expected type "
                           << expected << ", got " << result.getType();
  return success();
}

SmallVector<Type> ClipGradNormOp::inferResultTypes() {
  ShapeChecker checker;
  auto types = checkClipGradNorm(checker, getGradients().getTypes());
  if (succeeded(types))
    return *types;
  return llvm::to_vector(getResultTypes());
}

void ClipGradNormOp::build(OpBuilder &builder, OperationState &state,
                           ValueRange gradients, double maxNorm) {
  ShapeChecker checker;
  auto types = checkClipGradNorm(checker, gradients.getTypes());
  assert(succeeded(types) && "clip_grad_norm of invalid gradients");
  build(builder, state, types->front(),
        TypeRange(ArrayRef(*types).drop_front()), gradients,
        builder.getF64FloatAttr(maxNorm));
}

LogicalResult SGDUpdateOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  std::string what = operandName("weight");
  return failure(
      failed(checker.checkRankAtLeast(what, getWeight().getType(), 0)) ||
      failed(checker.checkFloatElementType(what, getWeight().getType())));
}

SmallVector<Type> SGDUpdateOp::inferResultTypes() {
  return {getWeight().getType()};
}
