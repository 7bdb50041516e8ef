//===- Wavefront.cpp - stacked recurrences as one wavefront ---------------===//
//
// recur.lstm_recurrence(g0, w_hh0) -> y0
// recur.linear(y0, w_ih1, b1)      -> g1
// recur.lstm_recurrence(g1, w_hh1) -> y1 ...
//   -> recur.lstm_wavefront(g0, w_hh(w_hh0, w_hh1), w_ih(w_ih1), bias(b1))
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/IR/Builders.h"

namespace mlir::recur {
#define GEN_PASS_DEF_WAVEFRONT
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// A layer of a stack after the first: its input projection and recurrence.
struct Link {
  LinearOp projection;
  LSTMRecurrenceOp recurrence;
};

/// Whether every use of `values` lies in `block` after `op`.
bool allUsesAfter(ValueRange values, Operation *op) {
  for (Value value : values)
    for (Operation *user : value.getUsers()) {
      Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
      if (!ancestor || !op->isBeforeInBlock(ancestor))
        return false;
    }
  return true;
}

/// The layer `last`'s output feeds (through its input projection, and the
/// other direction's output joined to it), if any.
LSTMRecurrenceOp followingLayer(LSTMRecurrenceOp last) {
  SmallVector<Value> outputs = {last.getY()};
  for (Operation *user : last.getY().getUsers())
    if (isa<tensor::ConcatOp>(user))
      outputs.push_back(user->getResult(0));
  for (Value output : outputs)
    for (Operation *user : output.getUsers())
      if (auto projection = dyn_cast<LinearOp>(user))
        for (Operation *next : projection.getResult().getUsers())
          if (auto recurrence = dyn_cast<LSTMRecurrenceOp>(next))
            return recurrence;
  return {};
}

/// The next layer of the stack that `last` ends, if `last`'s output feeds
/// nothing but it and it can join the wavefront of `first`. Where a next
/// layer exists but cannot join, says why in `whyNot`.
std::optional<Link> nextLayer(LSTMRecurrenceOp first, LSTMRecurrenceOp last,
                              ArrayRef<LSTMRecurrenceOp> layers,
                              std::string &whyNot) {
  if (!followingLayer(last))
    return std::nullopt; // the end of the stack
  auto fail = [&](StringRef reason) {
    whyNot = reason.str();
    return std::nullopt;
  };
  if (!last.getY().hasOneUse())
    return fail("the layer before's output is also read elsewhere (the other "
                "direction's, a gradient's)");
  if (isa<tensor::ConcatOp>(*last.getY().user_begin()))
    return fail("the layer before's output is joined with the other "
                "direction's (bidirectional)");
  auto projection = dyn_cast<LinearOp>(*last.getY().user_begin());
  if (!projection || projection.getInput() != last.getY() ||
      projection->getBlock() != last->getBlock())
    return fail("the layer before's output reaches it through other ops");
  if (!projection.getBias())
    return fail("its input projection has no bias");
  if (!projection.getResult().hasOneUse())
    return fail("its input projection is also read elsewhere");
  auto next = dyn_cast<LSTMRecurrenceOp>(*projection.getResult().user_begin());
  if (!next || next.getInputGates() != projection.getResult() ||
      next->getBlock() != last->getBlock())
    return fail("its input projection reaches it through other ops");
  // One schedule and one kind of initial state for the whole stack, whose
  // steps all run forward and are not projected.
  if (first.getReverse() || next.getReverse())
    return fail("the layers run in reverse");
  if (first.getWHr() || next.getWHr())
    return fail("the layers project their hidden state (proj_size)");
  if (next.getCell() != first.getCell() ||
      next.getGateTile().has_value() != first.getGateTile().has_value())
    return fail("the layers' steps are scheduled differently");
  if (bool(next.getH0()) != bool(first.getH0()) ||
      bool(next.getC0()) != bool(first.getC0()))
    return fail("the layers differ in having an initial state");
  // The wavefront op stands where the last layer was: the layers' states
  // must not be read before it.
  for (LSTMRecurrenceOp layer : layers)
    if (!allUsesAfter({layer.getHN(), layer.getCN()}, next))
      return fail("an earlier layer's final state is read before this layer");
  return Link{projection, next};
}

/// Replaces the stack `head`, `links` by one recur.lstm_wavefront.
void formWavefront(LSTMRecurrenceOp head, ArrayRef<Link> links) {
  LSTMRecurrenceOp tail = links.back().recurrence;
  OpBuilder builder(tail);
  Location loc = builder.getFusedLoc({head.getLoc(), tail.getLoc()});
  SmallVector<LSTMRecurrenceOp> layers = {head};
  for (const Link &link : links)
    layers.push_back(link.recurrence);
  bool interleaved = head.getGateTile().has_value();
  SmallVector<Value> wHh, wIh, bias, h0, c0;
  SmallVector<int64_t> tiles;
  for (LSTMRecurrenceOp layer : layers) {
    wHh.push_back(layer.getWHh());
    if (layer.getH0())
      h0.push_back(layer.getH0());
    if (layer.getC0())
      c0.push_back(layer.getC0());
    if (interleaved)
      tiles.push_back(*layer.getGateTile());
  }
  for (auto [index, link] : llvm::enumerate(links)) {
    LinearOp projection = link.projection;
    Value weight = projection.getWeight();
    Value layerBias = projection.getBias();
    // The step reads the input weight like w_hh: gate-interleaved.
    if (interleaved) {
      int64_t tile = tiles[index + 1];
      weight = InterleaveGatesOp::create(builder, loc, weight.getType(), weight,
                                         tile);
      layerBias = InterleaveGatesOp::create(builder, loc, layerBias.getType(),
                                            layerBias, tile);
    }
    wIh.push_back(weight);
    bias.push_back(layerBias);
  }
  auto wavefront = LSTMWavefrontOp::create(
      builder, loc, head.getInputGates(), wHh, wIh, bias, h0, c0,
      head.getCell(),
      interleaved ? builder.getDenseI64ArrayAttr(tiles) : DenseI64ArrayAttr());
  // The types the layers' results had (casting where the wavefront's
  // inference is less static, which a verified stack does not allow).
  auto replace = [&](Value old, Value replacement) {
    if (old.getType() != replacement.getType())
      replacement =
          tensor::CastOp::create(builder, loc, old.getType(), replacement);
    old.replaceAllUsesWith(replacement);
  };
  replace(tail.getY(), wavefront.getY());
  for (auto [layer, op] : llvm::enumerate(layers)) {
    replace(op.getHN(), wavefront.getHN()[layer]);
    replace(op.getCN(), wavefront.getCN()[layer]);
  }
  for (LSTMRecurrenceOp op : llvm::reverse(layers)) {
    Operation *projection =
        op == head ? nullptr : op.getInputGates().getDefiningOp();
    op->erase();
    if (projection)
      projection->erase();
  }
}

struct WavefrontPass : mlir::recur::impl::WavefrontBase<WavefrontPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<LSTMRecurrenceOp> recurrences;
    getOperation()->walk(
        [&](LSTMRecurrenceOp op) { recurrences.push_back(op); });
    DenseSet<Operation *> stacked;
    for (LSTMRecurrenceOp head : recurrences) {
      if (stacked.contains(head))
        continue;
      SmallVector<LSTMRecurrenceOp> layers = {head};
      SmallVector<Link> links;
      std::string whyNot;
      bool cutAtMaxLayers = false;
      while (std::optional<Link> link =
                 nextLayer(head, layers.back(), layers, whyNot)) {
        if (maxLayers > 0 && int64_t(layers.size()) == maxLayers) {
          whyNot = "the wavefront before it has max-layers = " +
                   std::to_string(maxLayers) +
                   " layers (on the GPU, its kernel's parameters fit 4 KB)";
          cutAtMaxLayers = true;
          break;
        }
        links.push_back(*link);
        layers.push_back(link->recurrence);
      }
      if (cutAtMaxLayers)
        remarkMissed(followingLayer(layers.back()), getArgument(),
                     "this layer starts a new wavefront instead of joining "
                     "the one of the layer before it",
                     whyNot);
      else if (!whyNot.empty())
        remarkMissed(followingLayer(layers.back()), getArgument(),
                     "this layer runs as a time loop of its own, not in one "
                     "wavefront with the layer before it",
                     whyNot);
      if (links.empty())
        continue;
      for (LSTMRecurrenceOp layer : layers)
        stacked.insert(layer);
      formWavefront(head, links);
    }
  }
};

} // namespace
