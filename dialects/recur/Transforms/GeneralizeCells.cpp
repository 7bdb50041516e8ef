//===- GeneralizeCells.cpp - named cells as recur.rnn ---------------------===//
//
// recur.gru, recur.rnn_tanh and recur.rnn_relu written as the recur.rnn of
// their cell, PyTorch's formulas in a region: the two products with the
// weights (recur.linear, biases included) and one pointwise linalg.generic
// for the rest, so that everything after this pass handles one form.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/CellMath.h"
#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/TensorCasts.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GENERALIZECELLS
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// The pointwise tail of a cell: from the products' [B, G·H] results (and
/// the previous h, [B, H]) to h_t.
using PointwiseFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Columns [offset, offset + width) of `matrix` [B, N].
Value columns(OpBuilder &b, Location loc, Value matrix, OpFoldResult batch,
              int64_t offset, int64_t width) {
  return tensor::ExtractSliceOp::create(
      b, loc, matrix,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{batch, b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// A zero state of `type` ([B, n]) for `input [T, B, I]`'s batch: what an
/// absent h0 or c0 stands for.
Value zeroState(RewriterBase &rewriter, Location loc, Value input,
                RankedTensorType type) {
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, input, 1);
  Type elementType = type.getElementType();
  Value empty = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(type.getDimSize(1))},
      elementType);
  Value zero = arith::ConstantOp::create(
      rewriter, loc, elementType, rewriter.getFloatAttr(elementType, 0.0));
  Value state = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  if (state.getType() != type)
    state = tensor::CastOp::create(rewriter, loc, type, state);
  return state;
}

/// A recur.rnn replacing `op` (with its `lengths`, if any), with the
/// results `stateTypes` after y, and
/// its cell block: x_t, then a state argument of each `init`'s type (no
/// more static than what it starts from), then the captures. The builder
/// is left at the block's start.
std::pair<RNNOp, Block *> createRecurrence(RewriterBase &rewriter,
                                           Operation *op, Value input,
                                           TypeRange stateTypes,
                                           ValueRange init, ValueRange captures,
                                           Value lengths, bool reverse) {
  Location loc = op->getLoc();
  auto rnn = RNNOp::create(rewriter, loc, op->getResult(0).getType(),
                           stateTypes, input, init, captures, lengths, reverse,
                           /*lengths_sorted=*/false);
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<Type> argumentTypes = {
      RankedTensorType::get({inputType.getDimSize(1), inputType.getDimSize(2)},
                            inputType.getElementType())};
  llvm::append_range(argumentTypes, init.getTypes());
  llvm::append_range(argumentTypes, captures.getTypes());
  Block *cell =
      rewriter.createBlock(&rnn.getBody(), {}, argumentTypes,
                           SmallVector<Location>(argumentTypes.size(), loc));
  return {rnn, cell};
}

/// gi = x_t · w_ihᵀ + b_ih and gh = h · w_hhᵀ + b_hh in `cell`, whose
/// argument 1 is h and whose captures, from argument `first`, are w_ih,
/// w_hh (and b_ih, b_hh), each split into its `gates` gates of `hidden`
/// columns: gi's, then gh's.
SmallVector<Value> gateColumns(RewriterBase &rewriter, Location loc,
                               Block *cell, unsigned first, bool biases,
                               int64_t gates, int64_t hidden) {
  Value x = cell->getArgument(0), h = cell->getArgument(1);
  Value wIh = cell->getArgument(first), wHh = cell->getArgument(first + 1);
  Value bIh = biases ? cell->getArgument(first + 2) : Value();
  Value bHh = biases ? cell->getArgument(first + 3) : Value();
  Value gi = LinearOp::create(rewriter, loc, x, wIh, bIh);
  Value gh = LinearOp::create(rewriter, loc, h, wHh, bHh);
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, h, 0);
  SmallVector<Value> result;
  for (Value product : {gi, gh})
    for (int64_t gate = 0; gate < gates; ++gate)
      result.push_back(
          columns(rewriter, loc, product, batch, gate * hidden, hidden));
  return result;
}

/// One elementwise linalg.generic over `inputs` ([B, hidden] each) with
/// `outputs` results of that shape; `body` maps the inputs' scalars to the
/// outputs'.
SmallVector<Value> pointwise(
    RewriterBase &rewriter, Location loc, ValueRange inputs, unsigned outputs,
    int64_t hidden,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, inputs.front(), 0);
  Type elementType = getElementTypeOrSelf(inputs.front().getType());
  SmallVector<Value> inits(
      outputs, tensor::EmptyOp::create(
                   rewriter, loc,
                   ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(hidden)},
                   elementType));
  SmallVector<AffineMap> maps(
      inputs.size() + outputs,
      AffineMap::getMultiDimIdentityMap(2, rewriter.getContext()));
  auto generic = linalg::GenericOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, body(b, loc, args.drop_back(outputs)));
      });
  return generic.getResults();
}

/// Replaces the named cell `op` by a recur.rnn whose cell computes
/// gi = x_t · w_ihᵀ + b_ih and gh = h · w_hhᵀ + b_hh, splits both into
/// their G gates of H columns and applies `cellFn` to (gi's gates, gh's
/// gates, h) elementwise.
template <typename CellOp>
void generalize(CellOp op, RewriterBase &rewriter, PointwiseFn cellFn) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto hType = cast<RankedTensorType>(op.getHN().getType());
  int64_t hidden = op.getHiddenSize();
  Value h0 =
      op.getH0() ? op.getH0() : zeroState(rewriter, loc, op.getInput(), hType);
  SmallVector<Value> captures = {op.getWIh(), op.getWHh()};
  if (op.getBIh())
    llvm::append_range(captures, ValueRange{op.getBIh(), op.getBHh()});
  auto [rnn, cell] = createRecurrence(
      rewriter, op, op.getInput(), TypeRange{hType}, ValueRange{h0}, captures,
      op.getLengths(), op.getReverse());
  SmallVector<Value> inputs = gateColumns(
      rewriter, loc, cell, 2, captures.size() > 2, CellOp::kGates, hidden);
  inputs.push_back(cell->getArgument(1));
  Value hNext = pointwise(rewriter, loc, inputs, 1, hidden,
                          [&](OpBuilder &b, Location loc, ValueRange args) {
                            return SmallVector<Value>{cellFn(b, loc, args)};
                          })[0];
  hNext = castTo(rewriter, loc, hNext, h0.getType());
  YieldOp::create(rewriter, loc, ValueRange{hNext, hNext});
  rewriter.replaceOp(op, rnn.getResults());
}

/// recur.lstm as a recur.rnn with the state (h, c): PyTorch's LSTM cell
/// (gates i, f, g, o) as one generic giving c_t and o ⊙ tanh(c_t), and the
/// projection (proj_size) as a product with w_hr.
void generalizeLSTM(LSTMOp op, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto hType = cast<RankedTensorType>(op.getHN().getType());
  auto cType = cast<RankedTensorType>(op.getCN().getType());
  int64_t hidden = op.getHiddenSize();
  Value h0 =
      op.getH0() ? op.getH0() : zeroState(rewriter, loc, op.getInput(), hType);
  Value c0 =
      op.getC0() ? op.getC0() : zeroState(rewriter, loc, op.getInput(), cType);
  SmallVector<Value> captures = {op.getWIh(), op.getWHh()};
  if (op.getBIh())
    llvm::append_range(captures, ValueRange{op.getBIh(), op.getBHh()});
  if (op.getWHr())
    captures.push_back(op.getWHr());
  auto [rnn, cell] = createRecurrence(
      rewriter, op, op.getInput(), TypeRange{hType, cType}, ValueRange{h0, c0},
      captures, op.getLengths(), op.getReverse());
  SmallVector<Value> inputs =
      gateColumns(rewriter, loc, cell, 3, bool(op.getBIh()), 4, hidden);
  inputs.push_back(cell->getArgument(2));
  SmallVector<Value> next = pointwise(
      rewriter, loc, inputs, 2, hidden,
      [](OpBuilder &b, Location loc, ValueRange args) {
        auto gate = [&](int64_t k) {
          return arith::AddFOp::create(b, loc, args[k], args[4 + k]);
        };
        Value i = sigmoid(b, loc, gate(0)), f = sigmoid(b, loc, gate(1));
        Value g = math::TanhOp::create(b, loc, gate(2));
        Value o = sigmoid(b, loc, gate(3));
        Value c = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, f, args[8]),
            arith::MulFOp::create(b, loc, i, g));
        Value h =
            arith::MulFOp::create(b, loc, o, math::TanhOp::create(b, loc, c));
        return SmallVector<Value>{c, h};
      });
  Value c = castTo(rewriter, loc, next[0], c0.getType());
  Value h = next[1];
  if (op.getWHr())
    h = LinearOp::create(rewriter, loc, h, cell->getArguments().back());
  h = castTo(rewriter, loc, h, h0.getType());
  YieldOp::create(rewriter, loc, ValueRange{h, h, c});
  rewriter.replaceOp(op, rnn.getResults());
}

/// PyTorch's GRU: (ri, zi, ni, rh, zh, nh, h) to h_t, the reset gate
/// applied to the recurrent product n_h (after the product, with b_hn).
Value gruCell(OpBuilder &b, Location loc, ValueRange args) {
  Value r = sigmoid(b, loc, arith::AddFOp::create(b, loc, args[0], args[3]));
  Value z = sigmoid(b, loc, arith::AddFOp::create(b, loc, args[1], args[4]));
  Value n = math::TanhOp::create(
      b, loc,
      arith::AddFOp::create(b, loc, args[2],
                            arith::MulFOp::create(b, loc, r, args[5])));
  Value one = arith::ConstantOp::create(b, loc, z.getType(),
                                        b.getFloatAttr(z.getType(), 1.0));
  Value keep = arith::SubFOp::create(b, loc, one, z);
  return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, keep, n),
                               arith::MulFOp::create(b, loc, z, args[6]));
}

} // namespace

void mlir::recur::generalizeCell(Operation *op, RewriterBase &rewriter) {
  if (auto lstmOp = dyn_cast<LSTMOp>(op)) {
    generalizeLSTM(lstmOp, rewriter);
  } else if (auto gru = dyn_cast<GRUOp>(op)) {
    generalize(gru, rewriter, gruCell);
  } else if (auto rnn = dyn_cast<RNNTanhOp>(op)) {
    generalize(rnn, rewriter,
               [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                 return math::TanhOp::create(
                     b, loc, arith::AddFOp::create(b, loc, args[0], args[1]));
               });
  } else {
    generalize(cast<RNNReluOp>(op), rewriter,
               [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                 Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
                 Value zero = arith::ConstantOp::create(
                     b, loc, sum.getType(), b.getFloatAttr(sum.getType(), 0.0));
                 return arith::MaximumFOp::create(b, loc, sum, zero);
               });
  }
}

namespace {

struct GeneralizeCellsPass
    : mlir::recur::impl::GeneralizeCellsBase<GeneralizeCellsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> cells;
    getOperation()->walk([&](Operation *op) {
      // An LSTM with sequence lengths too: recur.rnn takes them.
      auto lstmOp = dyn_cast<LSTMOp>(op);
      if (isa<GRUOp, RNNTanhOp, RNNReluOp>(op) ||
          (lstmOp && (lstm || lstmOp.getLengths())))
        cells.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : cells)
      generalizeCell(op, rewriter);
  }
};

} // namespace
