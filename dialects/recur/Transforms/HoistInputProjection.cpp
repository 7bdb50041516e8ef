//===- HoistInputProjection.cpp - one GEMM for all steps' input gates -----===//
//
// recur.lstm(x, w_ih, w_hh, b_ih, b_hh, h0, c0)
//   -> recur.lstm_recurrence(recur.linear(x, w_ih, b_ih + b_hh), w_hh, h0, c0)
// recur.rnn(x) { p = recur.linear(x_t, w, b) ... }
//   -> recur.rnn(recur.linear(x, w, b)) { p is x_t ... }
// and a scale and a bias the cell applies to p folded into that product.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"
#include "recur/Utils/SizeReads.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
    // recur-generalize-cells makes it a recur.rnn, which takes lengths.
    if (op.getLengths())
      return rewriter.notifyMatchFailure(op, "takes sequence lengths");
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

/// The ops that read `value` ([B, N]) other than for its batch size, which
/// the product that replaces x_t has too.
SmallVector<Operation *> readersOf(Value value) {
  return readersBeyondSizes(value, 1);
}

/// Why x_t of `op` cannot be replaced by a product computed before the
/// loop, or "" if it can: x_t feeds one recur.linear, with a captured
/// weight (and bias), and nothing else but reads of its batch size.
std::string whyNotHoistable(RNNOp op) {
  Value step = op.getStepInput();
  SmallVector<Operation *> readers = readersOf(step);
  if (readers.size() != 1)
    return readers.empty() ? "the cell does not read x_t"
                           : "x_t has several uses (one product with a "
                             "weight is hoisted)";
  auto product = dyn_cast<LinearOp>(readers.front());
  if (!product || product.getInput() != step)
    return "x_t is read other than by a product with a weight";
  if (!op.getCapturedOperand(product.getWeight()) ||
      (product.getBias() && !op.getCapturedOperand(product.getBias())))
    return "the product's weight or bias is computed in the cell";
  return "";
}

/// Where a cell adds a bias to the product rows `rows` (x_t after hoisting):
/// the add of a captured `[N]` vector, read as `(d0, d1) -> (d1)`, in a sum
/// that the rows start, `((p + q) + bias)`, within one pointwise generic or
/// through several whose result only the next one reads. Each add of the
/// sum feeds only the next, so the bias can move into the product.
struct BiasAdd {
  linalg::GenericOp generic;
  arith::AddFOp add;
  /// The other operand of `add`: what remains without the bias.
  Value rest;
  /// The bias, as the recur.rnn captures it.
  OpOperand *capture = nullptr;
};

/// The one op that reads `rows` ([B, N], x_t or a generic's result) other
/// than for its batch size, if it is a pointwise generic over [B, N] that
/// reads it once, element by element: that operand.
OpOperand *soleRowReader(Value rows) {
  SmallVector<Operation *> readers = readersOf(rows);
  auto generic = readers.size() == 1
                     ? dyn_cast<linalg::GenericOp>(readers.front())
                     : linalg::GenericOp();
  if (!generic || generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != 2)
    return nullptr;
  OpOperand *input = nullptr;
  for (OpOperand *operand : generic.getDpsInputOperands())
    if (operand->get() == rows) {
      if (input)
        return nullptr;
      input = operand;
    }
  if (!input || !generic.getMatchingIndexingMap(input).isIdentity())
    return nullptr;
  return input;
}

/// Whether `value`, in `generic`'s body, is a captured `[N]` vector read
/// as `(d0, d1) -> (d1)` and nowhere else in the body: its operand.
OpOperand *capturedColumn(RNNOp op, linalg::GenericOp generic, Value value) {
  auto term = dyn_cast<BlockArgument>(value);
  if (!term || term.getOwner() != generic.getBody() || !term.hasOneUse() ||
      term.getArgNumber() >= generic.getNumDpsInputs())
    return nullptr;
  OpOperand *vector = generic.getDpsInputOperand(term.getArgNumber());
  AffineMap map = generic.getMatchingIndexingMap(vector);
  OpOperand *capture = op.getCapturedOperand(vector->get());
  if (!capture || map.getNumResults() != 1 || map.getDimPosition(0) != 1)
    return nullptr;
  return capture;
}

std::optional<BiasAdd> findBiasAdd(RNNOp op, Value rows) {
  OpOperand *input = soleRowReader(rows);
  if (!input)
    return std::nullopt;
  auto generic = cast<linalg::GenericOp>(input->getOwner());
  Value sum = generic.getMatchingBlockArgument(input);
  while (sum.hasOneUse()) {
    Operation *user = *sum.user_begin();
    // The sum is a result of this generic: follow it into the next one.
    if (auto yield = dyn_cast<linalg::YieldOp>(user)) {
      unsigned result = sum.getUses().begin()->getOperandNumber();
      if (!generic.getMatchingIndexingMap(generic.getDpsInitOperand(result))
               .isIdentity())
        return std::nullopt;
      return findBiasAdd(op, generic.getResult(result));
    }
    auto add = dyn_cast<arith::AddFOp>(user);
    if (!add)
      return std::nullopt;
    Value other = add.getLhs() == sum ? add.getRhs() : add.getLhs();
    if (OpOperand *capture = capturedColumn(op, generic, other))
      return BiasAdd{generic, add, sum, capture};
    sum = add.getResult();
  }
  return std::nullopt;
}

/// Folds a bias that the cell adds to the product rows x_t into the hoisted
/// product `products` (its bias operand, or a sum with the one it has): the
/// GEMM adds it once per row as it writes them, and the step reads one
/// vector less. The sum is reassociated (x·w + q + b -> (x·w + b) + q), as
/// an LSTM's two biases are summed.
void foldBias(RNNOp op, LinearOp products, RewriterBase &rewriter) {
  std::optional<BiasAdd> found = findBiasAdd(op, op.getStepInput());
  if (!found)
    return;
  Value bias = found->capture->get();
  auto productType = cast<RankedTensorType>(products.getType());
  auto biasType = dyn_cast<RankedTensorType>(bias.getType());
  if (!biasType ||
      biasType != RankedTensorType::get({productType.getDimSize(2)},
                                        productType.getElementType()))
    return;
  rewriter.setInsertionPoint(products);
  if (Value existing = products.getBias())
    bias = arith::AddFOp::create(rewriter, products.getLoc(), existing, bias);
  rewriter.modifyOpInPlace(products,
                           [&] { products.getBiasMutable().assign(bias); });
  rewriter.replaceOp(found->add, found->rest);
}

/// Folds a scale the cell applies to the product rows x_t first (`(x·W) *
/// s`, s a captured `[N]` vector read as `(d0, d1) -> (d1)`) into the
/// hoisted product's weight and bias: W's row n and b_n times s_n, computed
/// from the weights alone (once per binding), and the step no longer
/// multiplies.
void foldScale(RNNOp op, LinearOp products, RewriterBase &rewriter) {
  OpOperand *rows = soleRowReader(op.getStepInput());
  if (!rows)
    return;
  auto generic = cast<linalg::GenericOp>(rows->getOwner());
  BlockArgument a = generic.getMatchingBlockArgument(rows);
  auto mul = a.hasOneUse() ? dyn_cast<arith::MulFOp>(*a.user_begin())
                           : arith::MulFOp();
  if (!mul)
    return;
  OpOperand *capture = capturedColumn(
      op, generic, mul.getLhs() == a ? mul.getRhs() : mul.getLhs());
  if (!capture)
    return;
  Value scale = capture->get();
  auto weightType = cast<RankedTensorType>(products.getWeight().getType());
  auto scaleType = dyn_cast<RankedTensorType>(scale.getType());
  if (!scaleType || weightType.getRank() != 2 ||
      scaleType != RankedTensorType::get({weightType.getDimSize(0)},
                                         weightType.getElementType()))
    return;
  Location loc = products.getLoc();
  rewriter.setInsertionPoint(products);
  MLIRContext *context = rewriter.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap perRow = AffineMap::get(2, 0, getAffineDimExpr(0, context));
  Value init = tensor::EmptyOp::create(rewriter, loc, weightType.getShape(),
                                       weightType.getElementType());
  Value weight =
      linalg::GenericOp::create(
          rewriter, loc, weightType, ValueRange{products.getWeight(), scale},
          init, ArrayRef<AffineMap>{identity, perRow, identity},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                b, loc,
                ValueRange{arith::MulFOp::create(b, loc, args[0], args[1])});
          })
          .getResult(0);
  Value bias = products.getBias();
  if (bias)
    bias = arith::MulFOp::create(rewriter, loc, bias, scale);
  rewriter.modifyOpInPlace(products, [&] {
    products.getWeightMutable().assign(weight);
    if (bias)
      products.getBiasMutable().assign(bias);
  });
  rewriter.replaceOp(mul, a);
}

/// recur.rnn(x) { p = linear(x_t, w, b); ... } -> recur.rnn(linear(x, w,
/// b)) { ... p is x_t ... }: one GEMM over all T·B rows before the loop.
/// `op` must be hoistable (whyNotHoistable).
void hoistInputProduct(RNNOp op, RewriterBase &rewriter) {
  Value step = op.getStepInput();
  auto product = cast<LinearOp>(*llvm::find_if(
      step.getUsers(), [](Operation *user) { return isa<LinearOp>(user); }));
  OpOperand *bias =
      product.getBias() ? op.getCapturedOperand(product.getBias()) : nullptr;
  rewriter.setInsertionPoint(op);
  Value products =
      LinearOp::create(rewriter, op.getLoc(), op.getInput(),
                       op.getCapturedOperand(product.getWeight())->get(),
                       bias ? bias->get() : Value());
  rewriter.modifyOpInPlace(op, [&] {
    op.getInputMutable().assign(products);
    step.setType(product.getResult().getType());
  });
  rewriter.replaceOp(product, step);
  foldScale(op, products.getDefiningOp<LinearOp>(), rewriter);
  foldBias(op, products.getDefiningOp<LinearOp>(), rewriter);
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
