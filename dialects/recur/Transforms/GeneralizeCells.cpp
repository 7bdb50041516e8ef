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

/// Replaces the named cell `op` by a recur.rnn whose cell computes
/// gi = x_t · w_ihᵀ + b_ih and gh = h · w_hhᵀ + b_hh, splits both into
/// their G gates of H columns and applies `pointwise` to (gi's gates, gh's
/// gates, h) elementwise.
template <typename CellOp>
void generalize(CellOp op, RewriterBase &rewriter, PointwiseFn pointwise) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto hType = cast<RankedTensorType>(op.getHN().getType());
  int64_t hidden = op.getHiddenSize();
  Type elementType = hType.getElementType();
  Value h0 = op.getH0();
  if (!h0) {
    OpFoldResult batch = tensor::getMixedSize(rewriter, loc, op.getInput(), 1);
    Value empty = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(hidden)},
        elementType);
    Value zero = arith::ConstantOp::create(
        rewriter, loc, elementType, rewriter.getFloatAttr(elementType, 0.0));
    h0 = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    if (h0.getType() != hType)
      h0 = tensor::CastOp::create(rewriter, loc, hType, h0);
  }
  SmallVector<Value> captures = {op.getWIh(), op.getWHh()};
  if (op.getBIh())
    llvm::append_range(captures, ValueRange{op.getBIh(), op.getBHh()});
  auto rnn =
      RNNOp::create(rewriter, loc, op.getY().getType(), TypeRange{hType},
                    op.getInput(), ValueRange{h0}, captures, op.getReverse());
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  SmallVector<Type> argumentTypes = {RankedTensorType::get(
      {inputType.getDimSize(1), inputType.getDimSize(2)}, elementType)};
  // The cell's h has h0's type: no more static than what it starts from.
  argumentTypes.push_back(h0.getType());
  llvm::append_range(argumentTypes, ValueRange(captures).getTypes());
  Block *cell =
      rewriter.createBlock(&rnn.getBody(), {}, argumentTypes,
                           SmallVector<Location>(argumentTypes.size(), loc));
  Value x = cell->getArgument(0), h = cell->getArgument(1);
  Value wIh = cell->getArgument(2), wHh = cell->getArgument(3);
  Value bIh = captures.size() > 2 ? cell->getArgument(4) : Value();
  Value bHh = captures.size() > 2 ? cell->getArgument(5) : Value();
  Value gi = LinearOp::create(rewriter, loc, x, wIh, bIh);
  Value gh = LinearOp::create(rewriter, loc, h, wHh, bHh);
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, h, 0);
  SmallVector<Value> inputs;
  for (Value product : {gi, gh})
    for (int64_t gate = 0; gate < CellOp::kGates; ++gate)
      inputs.push_back(
          columns(rewriter, loc, product, batch, gate * hidden, hidden));
  inputs.push_back(h);
  Value init = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(hidden)},
      elementType);
  SmallVector<AffineMap> maps(
      inputs.size() + 1,
      AffineMap::getMultiDimIdentityMap(2, rewriter.getContext()));
  Value hNext =
      linalg::GenericOp::create(
          rewriter, loc, init.getType(), inputs, ValueRange{init}, maps,
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(b, loc,
                                    pointwise(b, loc, args.drop_back()));
          })
          .getResult(0);
  if (hNext.getType() != h0.getType())
    hNext = tensor::CastOp::create(rewriter, loc, h0.getType(), hNext);
  YieldOp::create(rewriter, loc, ValueRange{hNext, hNext});
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

struct GeneralizeCellsPass
    : mlir::recur::impl::GeneralizeCellsBase<GeneralizeCellsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> cells;
    getOperation()->walk([&](Operation *op) {
      if (isa<GRUOp, RNNTanhOp, RNNReluOp>(op))
        cells.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : cells) {
      if (auto gru = dyn_cast<GRUOp>(op)) {
        generalize(gru, rewriter, gruCell);
      } else if (auto rnn = dyn_cast<RNNTanhOp>(op)) {
        generalize(rnn, rewriter,
                   [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                     return math::TanhOp::create(
                         b, loc,
                         arith::AddFOp::create(b, loc, args[0], args[1]));
                   });
      } else {
        generalize(
            cast<RNNReluOp>(op), rewriter,
            [](OpBuilder &b, Location loc, ValueRange args) -> Value {
              Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
              Value zero = arith::ConstantOp::create(
                  b, loc, sum.getType(), b.getFloatAttr(sum.getType(), 0.0));
              return arith::MaximumFOp::create(b, loc, sum, zero);
            });
      }
    }
  }
};

} // namespace
