//===- HoistInputProjection.cpp - one GEMM for all steps' input gates -----===//
//
// recur.lstm(x, w_ih, w_hh, b_ih, b_hh, h0, c0)
//   -> recur.lstm_recurrence(recur.linear(x, w_ih, b_ih + b_hh), w_hh, h0, c0)
// recur.rnn(x) { p = recur.linear(x_t, w, b) ... }
//   -> recur.rnn(recur.linear(x, w, b)) { p is x_t ... }
// and a scale and a bias the cell applies to p folded into that product;
// then what the cell computes from x_t alone, row by row (a layer norm of
// the product), over all T·B rows before the loop too.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "RowwiseOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"
#include "recur/Utils/SizeReads.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
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

/// What a cell computes from x_t alone, row by row: the ops, in order, and
/// the one value of theirs that the rest of the cell reads.
struct StepInputOps {
  SmallVector<Operation *> ops;
  Value result;
};

/// The ops of `op`'s cell that read x_t or what they compute from it, but
/// not the state, rowwise on invariant values (captures, constants, the
/// row count), if the rest of the cell reads one of their values only (not
/// x_t itself, but for its row count) and they compute something (not only
/// views): that value can be computed for every step before the loop.
std::optional<StepInputOps> stepInputOps(RNNOp op) {
  Block &cell = op.getCell();
  Value step = op.getStepInput();
  if (!cast<RankedTensorType>(step.getType()).isDynamicDim(0))
    return std::nullopt; // a cell of a static batch stays as it is
  DenseSet<Value> fromStep = {step};
  auto isLeafRow = [&](Value value) {
    return isFreshRows(value, [&](Value size) {
      return readsRowCount(size, fromStep);
    });
  };
  auto isRow = [&](Value value) {
    return fromStep.contains(value) || isLeafRow(value);
  };
  auto isRowCount = [&](Value value) {
    return readsRowCount(value, fromStep);
  };
  auto isInvariant = [&](Value value) {
    return op.getCapturedOperand(value) || matchPattern(value, m_Constant()) ||
           isRowCount(value);
  };
  RowRoles roles{isRow, isInvariant, isRowCount};
  SetVector<Operation *> ops;
  for (Operation &nested : cell.without_terminator()) {
    if (!llvm::any_of(nested.getOperands(), [&](Value operand) {
          return fromStep.contains(operand);
        }) ||
        leadingSizeRead(&nested, 1) || !isRowwise(&nested, roles))
      continue;
    ops.insert(&nested);
    fromStep.insert(nested.result_begin(), nested.result_end());
  }
  // The one value the rest of the cell reads (beyond row counts).
  Value result;
  for (Value value : fromStep)
    for (OpOperand &use : value.getUses()) {
      if (ops.contains(use.getOwner()) || leadingSizeRead(use.getOwner(), 1))
        continue;
      if (value == step || (result && result != value))
        return std::nullopt;
      result = value;
    }
  if (!result || llvm::all_of(ops, isRowView) ||
      cast<RankedTensorType>(result.getType()).getRank() != 2)
    return std::nullopt;
  // Only what the result needs.
  SetVector<Operation *> needed;
  SmallVector<Value> worklist = {result};
  while (!worklist.empty()) {
    Operation *producer = worklist.pop_back_val().getDefiningOp();
    if (!producer || !ops.contains(producer) || !needed.insert(producer))
      continue;
    llvm::append_range(worklist, producer->getOperands());
  }
  return StepInputOps{llvm::filter_to_vector(ops, [&](Operation *nested) {
                        return needed.contains(nested);
                      }),
                      result};
}

/// recur.rnn(x) { r = f(x_t) ... } -> recur.rnn(f(x)) { r is x_t ... }
/// for f the cell's rowwise ops on x_t alone (stepInputOps), run on the
/// T·B rows of x collapsed into one dimension; returns whether it did.
bool hoistStepInputOps(RNNOp op, RewriterBase &rewriter) {
  // A sorted recurrence's input product runs per step on the active rows.
  if (op.getLengthsSorted())
    return false;
  std::optional<StepInputOps> found = stepInputOps(op);
  auto sequenceType = cast<RankedTensorType>(op.getInput().getType());
  if (!found || sequenceType.getRank() != 3)
    return false;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value sequence = op.getInput();
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, sequence, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value stepRows = collapsed;
  Type stepType = op.getStepInput().getType();
  if (stepRows.getType() != stepType)
    stepRows = tensor::CastOp::create(rewriter, loc, stepType, stepRows);
  IRMapping mapping;
  mapping.map(op.getStepInput(), stepRows);
  for (BlockArgument capture : op.getCaptureArguments())
    mapping.map(capture, op.getCapturedOperand(capture)->get());
  auto isLeaf = [](Operation *leaf) {
    return isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp,
               linalg::FillOp>(leaf);
  };
  if (!cloneRowwise(rewriter, found->ops, mapping, isLeaf)) {
    if (stepRows != collapsed)
      rewriter.eraseOp(stepRows.getDefiningOp());
    rewriter.eraseOp(collapsed.getDefiningOp());
    return false;
  }
  Value rows = mapping.lookup(found->result);
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto dim = [&](Value tensor, int64_t index) -> OpFoldResult {
    return tensor::getMixedSize(rewriter, loc, tensor, index);
  };
  SmallVector<OpFoldResult> shape = {dim(sequence, 0), dim(sequence, 1),
                                     rewriter.getIndexAttr(rowsType.getDimSize(1))};
  auto [staticShape, dynamicShape] = decomposeMixedValues(shape);
  (void)dynamicShape;
  Value input = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get(staticShape, rowsType.getElementType()), rows,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}}, shape);
  BlockArgument step = op.getStepInput();
  rewriter.modifyOpInPlace(op, [&] {
    op.getInputMutable().assign(input);
    step.setType(found->result.getType());
  });
  // The rest of the cell reads the row count of what it no longer computes
  // from x_t, which has those rows.
  for (Operation *hoisted : found->ops)
    for (Value result : hoisted->getResults())
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (tensor::DimOp size = leadingSizeRead(user, 1);
            size && !llvm::is_contained(found->ops, user))
          rewriter.modifyOpInPlace(size,
                                   [&] { size.getSourceMutable().assign(step); });
  rewriter.replaceAllUsesWith(found->result, step);
  for (Operation *hoisted : llvm::reverse(found->ops))
    if (hoisted->use_empty())
      rewriter.eraseOp(hoisted);
  return true;
}

struct HoistInputProjectionPass
    : mlir::recur::impl::HoistInputProjectionBase<HoistInputProjectionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistLSTMInputProjection>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    SmallVector<RNNOp> recurrences;
    getOperation()->walk([&](RNNOp op) { recurrences.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (RNNOp op : recurrences) {
      std::string whyNot = whyNotHoistable(op);
      if (whyNot.empty())
        hoistInputProduct(op, rewriter);
      // A product that could not be hoisted alone may be with the rest of
      // what reads x_t only.
      if (!hoistStepInputOps(op, rewriter) && !whyNot.empty())
        remarkMissed(op, getArgument(),
                     "this recurrence's product with x_t runs at every step, "
                     "not as one GEMM over all steps",
                     whyNot);
    }
  }
};

} // namespace
