//===- HoistInputProjection.cpp - one GEMM for all steps' input gates -----===//
//
// recur.lstm(x, w_ih, w_hh, b_ih, b_hh, h0, c0)
//   -> recur.lstm_recurrence(recur.linear(x, w_ih, b_ih + b_hh), w_hh, h0, c0)
// recur.rnn(x) { p = recur.linear(x_t, w, b) ... }
//   -> recur.rnn(recur.linear(x, w, b)) { p is x_t ... }
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::recur {
#define GEN_PASS_DEF_HOISTINPUTPROJECTION
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

struct HoistLSTMInputProjection : OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Both biases are weights: their sum is computed once, not per row.
    Value bias;
    if (op.getBIh())
      bias = arith::AddFOp::create(rewriter, loc, op.getBIh(), op.getBHh());
    Value gates =
        LinearOp::create(rewriter, loc, op.getInput(), op.getWIh(), bias);
    auto recurrence = LSTMRecurrenceOp::create(
        rewriter, loc, gates, op.getWHh(), op.getH0(), op.getC0(),
        CellSchedule::separate, op.getReverse(), op.getWHr());
    // The results are as static as the op promised, or the op was invalid.
    SmallVector<Value> results;
    for (auto [value, type] :
         llvm::zip_equal(recurrence.getResults(), op.getResultTypes()))
      results.push_back(
          value.getType() == type
              ? Value(value)
              : tensor::CastOp::create(rewriter, loc, type, value).getResult());
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The operand a recur.rnn captures as `value`, if `value` is one of its
/// cell's capture arguments.
OpOperand *capturedOperand(RNNOp op, Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || argument.getOwner() != &op.getCell())
    return nullptr;
  unsigned first = 1 + op.getInit().size();
  if (argument.getArgNumber() < first)
    return nullptr;
  return &op.getCapturesMutable()[argument.getArgNumber() - first];
}

/// Whether `use` of x_t reads only its batch size (tensor.dim 0), which the
/// product that replaces x_t has too.
bool readsBatchSize(OpOperand &use) {
  auto dim = dyn_cast<tensor::DimOp>(use.getOwner());
  return dim && dim.getConstantIndex() == 0;
}

/// Why x_t of `op` cannot be replaced by a product computed before the
/// loop, or "" if it can: x_t feeds one recur.linear, with a captured
/// weight (and bias), and nothing else but reads of its batch size.
std::string whyNotHoistable(RNNOp op) {
  Value step = op.getStepInput();
  SmallVector<Operation *> readers;
  for (OpOperand &use : step.getUses())
    if (!readsBatchSize(use))
      readers.push_back(use.getOwner());
  if (readers.size() != 1)
    return readers.empty() ? "the cell does not read x_t"
                           : "x_t has several uses (one product with a "
                             "weight is hoisted)";
  auto product = dyn_cast<LinearOp>(readers.front());
  if (!product || product.getInput() != step)
    return "x_t is read other than by a product with a weight";
  if (!capturedOperand(op, product.getWeight()) ||
      (product.getBias() && !capturedOperand(op, product.getBias())))
    return "the product's weight or bias is computed in the cell";
  return "";
}

/// recur.rnn(x) { p = linear(x_t, w, b); ... } -> recur.rnn(linear(x, w,
/// b)) { ... p is x_t ... }: one GEMM over all T·B rows before the loop.
/// `op` must be hoistable (whyNotHoistable).
void hoistInputProduct(RNNOp op, RewriterBase &rewriter) {
  Value step = op.getStepInput();
  auto product = cast<LinearOp>(*llvm::find_if(
      step.getUsers(), [](Operation *user) { return isa<LinearOp>(user); }));
  OpOperand *bias =
      product.getBias() ? capturedOperand(op, product.getBias()) : nullptr;
  rewriter.setInsertionPoint(op);
  Value products =
      LinearOp::create(rewriter, op.getLoc(), op.getInput(),
                       capturedOperand(op, product.getWeight())->get(),
                       bias ? bias->get() : Value());
  rewriter.modifyOpInPlace(op, [&] {
    op.getInputMutable().assign(products);
    step.setType(product.getResult().getType());
  });
  rewriter.replaceOp(product, step);
}

struct HoistInputProjectionPass
    : mlir::recur::impl::HoistInputProjectionBase<HoistInputProjectionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistLSTMInputProjection>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    SmallVector<RNNOp> hoistable;
    getOperation()->walk([&](RNNOp op) {
      if (std::string whyNot = whyNotHoistable(op); whyNot.empty())
        hoistable.push_back(op);
      else
        remarkMissed(op, getArgument(),
                     "this recurrence's product with x_t runs at every step, "
                     "not as one GEMM over all steps",
                     whyNot);
    });
    IRRewriter rewriter(&getContext());
    for (RNNOp op : hoistable)
      hoistInputProduct(op, rewriter);
  }
};

} // namespace
