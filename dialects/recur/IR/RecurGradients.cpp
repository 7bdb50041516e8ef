//===- RecurGradients.cpp - vector-Jacobian products of recur ops ---------===//
//
// The Differentiable interface of the forward ops: each builds the recur ops
// that compute its operands' gradients from its results' (recur-differentiate
// calls them in reverse program order).
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::recur;

/// Sets `gradients` to one null value per operand of `op`.
static void resetGradients(Operation *op, SmallVectorImpl<Value> &gradients) {
  gradients.assign(op->getNumOperands(), Value());
}

LogicalResult EmbeddingOp::buildGradients(OpBuilder &builder,
                                          ArrayRef<Value> resultGradients,
                                          ArrayRef<bool> needed,
                                          SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  Value dResult = resultGradients[0];
  if (!dResult || !needed[getTableMutable().getOperandNumber()])
    return success();
  int64_t rows = cast<ShapedType>(getTable().getType()).getDimSize(0);
  gradients[getTableMutable().getOperandNumber()] =
      EmbeddingGradOp::create(builder, getLoc(), dResult, getIds(), rows);
  return success();
}

LogicalResult LinearOp::buildGradients(OpBuilder &builder,
                                       ArrayRef<Value> resultGradients,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  Value dResult = resultGradients[0];
  if (!dResult || llvm::none_of(needed, [](bool b) { return b; }))
    return success();
  if (cast<ShapedType>(getWeight().getType()).getRank() != 2)
    return emitOpError() << "has a packed weight and cannot be differentiated "
                            "(differentiate before recur-pack-weights)";
  auto grad =
      LinearGradOp::create(builder, getLoc(), dResult, getInput(), getWeight());
  unsigned input = getInputMutable().getOperandNumber();
  unsigned weight = getWeightMutable().getOperandNumber();
  if (needed[input])
    gradients[input] = grad.getDInput();
  if (needed[weight])
    gradients[weight] = grad.getDWeight();
  if (getBias() && needed[getBiasMutable()[0].getOperandNumber()])
    gradients[getBiasMutable()[0].getOperandNumber()] = grad.getDBias();
  return success();
}

LogicalResult TransposeOp::buildGradients(OpBuilder &builder,
                                          ArrayRef<Value> resultGradients,
                                          ArrayRef<bool> needed,
                                          SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  if (!resultGradients[0] || !needed[0])
    return success();
  // The inverse permutation moves every dimension back.
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [k, dim] : llvm::enumerate(permutation))
    inverse[dim] = k;
  gradients[0] =
      TransposeOp::create(builder, getLoc(), resultGradients[0], inverse);
  return success();
}

LogicalResult LSTMOp::buildGradients(OpBuilder &builder,
                                     ArrayRef<Value> resultGradients,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  if (getWHr())
    return emitOpError() << "projects its hidden state (w_hr), which "
                            "recur-differentiate does not support yet";
  if (getReverse())
    return emitOpError() << "runs in reverse (a bidirectional layer's "
                            "backward direction), which recur-differentiate "
                            "does not support yet";
  Value dY = resultGradients[0], dHN = resultGradients[1],
        dCN = resultGradients[2];
  if (!dY && !dHN && !dCN)
    return success();
  auto grad = LSTMGradOp::create(builder, getLoc(), getInput(), getWIh(),
                                 getWHh(), getBIh(), getBHh(), getY(), dY,
                                 getH0(), getC0(), dHN, dCN, getLengths());
  SmallVector<std::pair<OpOperand *, Value>> rules = {
      {&getInputMutable(), grad.getDInput()},
      {&getWIhMutable(), grad.getDWIh()},
      {&getWHhMutable(), grad.getDWHh()}};
  if (getBIh()) {
    rules.push_back({&getBIhMutable()[0], grad.getDBias()});
    rules.push_back({&getBHhMutable()[0], grad.getDBias()});
  }
  if (getH0())
    rules.push_back({&getH0Mutable()[0], grad.getDH0()});
  if (getC0())
    rules.push_back({&getC0Mutable()[0], grad.getDC0()});
  for (auto &[operand, gradient] : rules)
    if (needed[operand->getOperandNumber()])
      gradients[operand->getOperandNumber()] = gradient;
  return success();
}

LogicalResult GRUOp::buildGradients(OpBuilder &builder,
                                    ArrayRef<Value> resultGradients,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  if (getReverse())
    return emitOpError() << "runs in reverse (a bidirectional layer's "
                            "backward direction), which recur-differentiate "
                            "does not support yet";
  Value dY = resultGradients[0], dHN = resultGradients[1];
  if (!dY && !dHN)
    return success();
  auto grad = GRUGradOp::create(builder, getLoc(), getInput(), getWIh(),
                                getWHh(), getBIh(), getBHh(), getY(), dY,
                                getH0(), dHN, getLengths());
  SmallVector<std::pair<OpOperand *, Value>> rules = {
      {&getInputMutable(), grad.getDInput()},
      {&getWIhMutable(), grad.getDWIh()},
      {&getWHhMutable(), grad.getDWHh()}};
  if (getBIh()) {
    rules.push_back({&getBIhMutable()[0], grad.getDBIh()});
    rules.push_back({&getBHhMutable()[0], grad.getDBHh()});
  }
  if (getH0())
    rules.push_back({&getH0Mutable()[0], grad.getDH0()});
  for (auto &[operand, gradient] : rules)
    if (needed[operand->getOperandNumber()])
      gradients[operand->getOperandNumber()] = gradient;
  return success();
}

/// nn.RNN's layers: recur.rnn_grad (`relu` for rnn_relu).
template <typename ElmanOp>
static LogicalResult
elmanGradients(ElmanOp op, OpBuilder &builder, ArrayRef<Value> resultGradients,
               ArrayRef<bool> needed, SmallVectorImpl<Value> &gradients,
               bool relu) {
  resetGradients(op, gradients);
  if (op.getReverse())
    return op.emitOpError() << "runs in reverse (a bidirectional layer's "
                               "backward direction), which "
                               "recur-differentiate does not support yet";
  Value dY = resultGradients[0], dHN = resultGradients[1];
  if (!dY && !dHN)
    return success();
  auto grad = RNNGradOp::create(builder, op.getLoc(), op.getInput(),
                                op.getWIh(), op.getWHh(), op.getY(), dY,
                                op.getH0(), dHN, op.getLengths(), relu);
  SmallVector<std::pair<OpOperand *, Value>> rules = {
      {&op.getInputMutable(), grad.getDInput()},
      {&op.getWIhMutable(), grad.getDWIh()},
      {&op.getWHhMutable(), grad.getDWHh()}};
  if (op.getBIh()) {
    rules.push_back({&op.getBIhMutable()[0], grad.getDBias()});
    rules.push_back({&op.getBHhMutable()[0], grad.getDBias()});
  }
  if (op.getH0())
    rules.push_back({&op.getH0Mutable()[0], grad.getDH0()});
  for (auto &[operand, gradient] : rules)
    if (needed[operand->getOperandNumber()])
      gradients[operand->getOperandNumber()] = gradient;
  return success();
}

LogicalResult RNNTanhOp::buildGradients(OpBuilder &builder,
                                        ArrayRef<Value> resultGradients,
                                        ArrayRef<bool> needed,
                                        SmallVectorImpl<Value> &gradients) {
  return elmanGradients(*this, builder, resultGradients, needed, gradients,
                        /*relu=*/false);
}

LogicalResult RNNReluOp::buildGradients(OpBuilder &builder,
                                        ArrayRef<Value> resultGradients,
                                        ArrayRef<bool> needed,
                                        SmallVectorImpl<Value> &gradients) {
  return elmanGradients(*this, builder, resultGradients, needed, gradients,
                        /*relu=*/true);
}

LogicalResult CrossEntropyOp::buildGradients(
    OpBuilder &builder, ArrayRef<Value> resultGradients, ArrayRef<bool> needed,
    SmallVectorImpl<Value> &gradients) {
  resetGradients(*this, gradients);
  unsigned logits = getLogitsMutable().getOperandNumber();
  if (!resultGradients[0] || !needed[logits])
    return success();
  gradients[logits] =
      CrossEntropyGradOp::create(builder, getLoc(), getLogits(), getTargets(),
                                 resultGradients[0], getReduction());
  return success();
}
