//===- HoistInputProjection.cpp - one GEMM for all steps' input gates -----===//
//
// recur.lstm(x, w_ih, w_hh, b_ih, b_hh, h0, c0)
//   -> recur.lstm_recurrence(recur.linear(x, w_ih, b_ih + b_hh), w_hh, h0, c0)
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

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

struct HoistInputProjectionPass
    : mlir::recur::impl::HoistInputProjectionBase<HoistInputProjectionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistLSTMInputProjection>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    getOperation()->walk([&](RNNOp op) {
      remarkMissed(op, getArgument(),
                   "this recurrence's cell runs as written at every step: its "
                   "products with x_t are not one GEMM over all steps, and "
                   "no later fusion stage takes it",
                   "the fusion stages take the LSTM's forms only so far (a "
                   "recur.rnn cell region: GRU, RNN, custom cells)");
    });
  }
};

} // namespace
