//===- Wavefront.cpp - stacked recurrences as one wavefront ---------------===//
//
// recur.lstm_recurrence(g0, w_hh0) -> y0
// recur.linear(y0, w_ih1, b1)      -> g1
// recur.lstm_recurrence(g1, w_hh1) -> y1 ...
//   -> recur.lstm_wavefront(g0, w_hh(w_hh0, w_hh1), w_ih(w_ih1), bias(b1))
// and stacked recur.rnn (their input projections, if hoisted, back in the
// cells, with what the cells computed from them alone) ->
// recur.rnn_wavefront with the layers' cells.
//
//===----------------------------------------------------------------------===//

#include "RowwiseOps.h"
#include "recur/IR/RecurOps.h"
#include "recur/IR/UnitStepCells.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"
#include "recur/Utils/SizeReads.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

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
                              std::string &whyNot, bool /*unitSteps*/) {
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

/// The layers of the stack `head`, `links`.
template <typename Recurrence, typename LinkT>
SmallVector<Recurrence> layersOf(Recurrence head, ArrayRef<LinkT> links) {
  SmallVector<Recurrence> layers = {head};
  for (const LinkT &link : links)
    layers.push_back(link.recurrence);
  return layers;
}

/// Replaces the stack `head`, `links` by one recur.lstm_wavefront.
void formWavefront(LSTMRecurrenceOp head, ArrayRef<Link> links) {
  LSTMRecurrenceOp tail = links.back().recurrence;
  OpBuilder builder(tail);
  Location loc = builder.getFusedLoc({head.getLoc(), tail.getLoc()});
  SmallVector<LSTMRecurrenceOp> layers = layersOf(head, links);
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

/// A recur.rnn layer of a stack after the first: its input projection
/// (hoisted out of its cell, if it was), what the cell computed from the
/// projection alone (hoisted too, if so) and recurrence.
struct RNNLink {
  LinearOp projection;
  std::optional<RowChain> chain;
  RNNOp recurrence;
};

/// The ops that read `sequence` ([T, B, N]) other than for T or B, which
/// the wavefront's input has too.
SmallVector<Operation *> readersOf(Value sequence) {
  return readersBeyondSizes(sequence, 2);
}

/// `sequence`'s T and B read from `input` instead (readersOf).
void readSizesFrom(Value sequence, Value input) {
  for (Operation *user : llvm::make_early_inc_range(sequence.getUsers()))
    if (tensor::DimOp dim = leadingSizeRead(user, 2))
      dim.getSourceMutable().assign(input);
}

/// The recur.rnn whose input is `sequence` or a row chain on it.
RNNOp readingRecurrence(Value sequence, Operation *after) {
  for (Operation *user : sequence.getUsers()) {
    if (auto next = dyn_cast<RNNOp>(user); next && next.getInput() == sequence)
      return next;
    if (isa<tensor::CollapseShapeOp>(user))
      for (Operation *op = after->getNextNode(); op; op = op->getNextNode())
        if (auto next = dyn_cast<RNNOp>(op))
          if (std::optional<RowChain> chain = rowChainInto(next);
              chain && chain->rows == user)
            return next;
  }
  return {};
}

/// The recur.rnn that `last`'s output feeds, directly or through a product
/// (and a row chain).
RNNOp followingLayer(RNNOp last) {
  if (RNNOp next = readingRecurrence(last.getY(), last))
    return next;
  for (Operation *user : last.getY().getUsers())
    if (auto projection = dyn_cast<LinearOp>(user))
      if (RNNOp next = readingRecurrence(projection.getResult(), last))
        return next;
  return {};
}

/// With unit steps (the GPU's fused wavefront of recur.rnn layers): why
/// `next` cannot join the stack of `first`, reading the layer before's y_t
/// through `projection` (if any) and a row chain (if `chained`), or "".
std::string whyNotOneUnitStep(RNNOp first, RNNOp next, LinearOp projection,
                              bool chained) {
  if (chained)
    return "a rowwise chain (a layer norm of its input projection) lies "
           "between the layers, which the GPU's unit step does not compute";
  std::string whyNot;
  FailureOr<UnitStepCell> head =
      analyzeUnitStepCell(first.getCell(), first.getInit().size(), whyNot);
  if (failed(head))
    return "in the first layer: " + whyNot;
  FailureOr<UnitStepCell> cell =
      analyzeUnitStepCell(next.getCell(), next.getInit().size(), whyNot);
  if (failed(cell))
    return whyNot;
  if (!sameUnitStepShape(*head, *cell))
    return "its cell's unit step differs from the first layer's in hidden "
           "size, gates, states or yields";
  if (projection && !cell->inputInColumns)
    return "its cell reads its input row other than by gate columns, so its "
           "input product cannot be summed in its unit step";
  return "";
}

/// nextLayer for recur.rnn stacks: `last`'s output feeds nothing but the
/// next layer, directly or through its hoisted input projection.
std::optional<RNNLink> nextLayer(RNNOp first, RNNOp last,
                                 ArrayRef<RNNOp> layers, std::string &whyNot,
                                 bool unitSteps) {
  if (!followingLayer(last))
    return std::nullopt;
  auto fail = [&](StringRef reason) {
    whyNot = reason.str();
    return std::nullopt;
  };
  SmallVector<Operation *> readers = readersOf(last.getY());
  if (readers.size() != 1)
    return fail("the layer before's output is also read elsewhere (the other "
                "direction's, a gradient's)");
  Operation *user = readers.front();
  auto projection = dyn_cast<LinearOp>(user);
  Value input = last.getY();
  if (projection) {
    if (projection.getInput() != last.getY() ||
        projection->getBlock() != last->getBlock())
      return fail("the layer before's output reaches it through other ops");
    readers = readersOf(projection.getResult());
    if (readers.size() != 1)
      return fail("its input projection is also read elsewhere");
    input = projection.getResult();
    user = readers.front();
  }
  std::optional<RowChain> chain;
  auto next = dyn_cast<RNNOp>(user);
  if (isa<tensor::CollapseShapeOp>(user)) {
    next = readingRecurrence(input, last);
    chain = next ? rowChainInto(next) : std::nullopt;
    if (!chain || chain->rows != user)
      return fail("the layer before's output reaches it through other ops");
    input = next.getInput();
  }
  if (!next || next.getInput() != input || next->getBlock() != last->getBlock())
    return fail("the layer before's output reaches it through other ops");
  if (first.getReverse() || next.getReverse())
    return fail("the layers run in reverse");
  // Layers with lengths: on rows sorted by them (recur-sort-by-length),
  // the same for all.
  if (first.getLengths() != next.getLengths())
    return fail("the layers take different sequence lengths");
  if (first.getLengths() &&
      (!first.getLengthsSorted() || !next.getLengthsSorted()))
    return fail("the layers take sequence lengths, their rows not sorted "
                "by them (recur-sort-by-length)");
  for (RNNOp layer : layers)
    if (!allUsesAfter(layer.getFinalStates(), next))
      return fail("an earlier layer's final state is read before this layer");
  if (unitSteps) {
    std::string reason =
        whyNotOneUnitStep(first, next, projection, chain.has_value());
    if (!reason.empty())
      return fail(reason);
  }
  return RNNLink{projection, chain, next};
}

/// What the cell of the layer `link` joins captures first: its input
/// projection's weight (and bias), then what its row chain reads.
SmallVector<Value> linkCaptures(const RNNLink &link) {
  SmallVector<Value> captured;
  if (LinearOp projection = link.projection) {
    captured.push_back(projection.getWeight());
    if (projection.getBias())
      captured.push_back(projection.getBias());
  }
  if (link.chain)
    llvm::append_range(captured, link.chain->invariants);
  return captured;
}

/// Layer `link`'s cell, moved into `region`, reads its input row: the
/// layer before's y_t, through the input projection it had before the
/// loop and the row chain after it, now in the cell, whose weight (and
/// bias) and what the chain reads become its first captures.
void moveCell(RNNOp layer, const RNNLink *link, Region &region,
              OpBuilder &builder) {
  region.takeBody(layer.getBody());
  LinearOp projection = link ? link->projection : LinearOp();
  if (!link || (!projection && !link->chain))
    return;
  Block &cell = region.front();
  Location loc = layer.getLoc();
  unsigned captures = 1 + layer.getInit().size();
  SmallVector<Value> captured = linkCaptures(*link);
  SmallVector<Value> arguments;
  for (auto [index, value] : llvm::enumerate(captured))
    arguments.push_back(
        cell.insertArgument(captures + index, value.getType(), loc));
  std::optional<RowChain> chain = link->chain;
  Value layerInput = projection ? projection.getInput() : chain->rows.getSrc();
  auto sequence = cast<RankedTensorType>(layerInput.getType());
  BlockArgument row = cell.insertArgument(
      0u,
      RankedTensorType::get({sequence.getDimSize(1), sequence.getDimSize(2)},
                            sequence.getElementType()),
      loc);
  BlockArgument oldRow = cell.getArgument(1);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&cell);
  Value product = row;
  if (projection)
    product = LinearOp::create(builder, loc, row, arguments[0],
                               projection.getBias() ? arguments[1] : Value());
  if (chain) {
    IRMapping mapping;
    Value rows = product;
    if (rows.getType() != chain->rows.getType())
      rows = tensor::CastOp::create(builder, loc, chain->rows.getType(), rows);
    mapping.map(chain->rows.getResult(), rows);
    for (Value count : chain->rowCounts)
      mapping.map(count, tensor::DimOp::create(builder, loc, rows, 0));
    unsigned first = projection ? (projection.getBias() ? 2 : 1) : 0;
    for (auto [index, invariant] : llvm::enumerate(chain->invariants))
      mapping.map(invariant, arguments[first + index]);
    [[maybe_unused]] bool cloned =
        cloneRowwise(builder, chain->ops, mapping, isRowChainLeaf);
    assert(cloned && "rowChainInto checked what the chain reads");
    product = mapping.lookup(chain->steps.getSrc());
  }
  if (product.getType() != oldRow.getType())
    product = tensor::CastOp::create(builder, loc, oldRow.getType(), product);
  oldRow.replaceAllUsesWith(product);
  cell.eraseArgument(1);
}

/// Erases `chain`, now in a cell, with the leaves it alone read.
void eraseRowChain(RowChain chain) {
  Operation *rows = chain.rows;
  Operation *op = chain.steps;
  while (op != rows) {
    Operation *before = op->getPrevNode();
    if (isOpTriviallyDead(op))
      op->erase();
    op = before;
  }
  rows->erase();
}

/// Replaces the recur.rnn stack `head`, `links` by one recur.rnn_wavefront.
void formWavefront(RNNOp head, ArrayRef<RNNLink> links) {
  RNNOp tail = links.back().recurrence;
  OpBuilder builder(tail);
  Location loc = builder.getFusedLoc({head.getLoc(), tail.getLoc()});
  SmallVector<RNNOp> layers = layersOf(head, links);
  SmallVector<Value> inits, captures;
  SmallVector<int64_t> stateCounts, captureCounts;
  SmallVector<Type> resultTypes = {tail.getY().getType()};
  for (auto [index, layer] : llvm::enumerate(layers)) {
    llvm::append_range(inits, layer.getInit());
    llvm::append_range(resultTypes, layer.getFinalStates().getTypes());
    stateCounts.push_back(layer.getInit().size());
    int64_t count = layer.getCaptures().size();
    if (index > 0) {
      SmallVector<Value> captured = linkCaptures(links[index - 1]);
      llvm::append_range(captures, captured);
      count += captured.size();
    }
    llvm::append_range(captures, layer.getCaptures());
    captureCounts.push_back(count);
  }
  auto wavefront = RNNWavefrontOp::create(
      builder, loc, resultTypes, head.getInput(), inits, captures,
      head.getLengths(), builder.getDenseI64ArrayAttr(stateCounts),
      builder.getDenseI64ArrayAttr(captureCounts), layers.size());
  for (auto [index, layer] : llvm::enumerate(layers))
    moveCell(layer, index > 0 ? &links[index - 1] : nullptr,
             wavefront.getLayers()[index], builder);
  // Captures that no cell reads (a hoisted product's weight) are dropped;
  // from the last layer back, so that earlier layers' offsets hold.
  SmallVector<int64_t> counts(captureCounts);
  for (int64_t layer = layers.size() - 1; layer >= 0; --layer) {
    Block &cell = wavefront.getCell(layer);
    unsigned first = 1 + stateCounts[layer];
    int64_t offset = 0;
    for (int64_t before = 0; before < layer; ++before)
      offset += counts[before];
    for (int64_t index = counts[layer] - 1; index >= 0; --index)
      if (cell.getArgument(first + index).use_empty()) {
        cell.eraseArgument(first + index);
        wavefront.getCapturesMutable().erase(offset + index);
        --counts[layer];
      }
  }
  wavefront.setCaptureCounts(counts);
  for (auto [index, link] : llvm::enumerate(links)) {
    readSizesFrom(layers[index].getY(), head.getInput());
    if (LinearOp projection = link.projection)
      readSizesFrom(projection.getResult(), head.getInput());
  }
  tail.getY().replaceAllUsesWith(wavefront.getY());
  for (auto [index, layer] : llvm::enumerate(layers))
    for (auto [old, replacement] : llvm::zip_equal(
             layer.getFinalStates(), wavefront.getLayerFinalStates(index)))
      old.replaceAllUsesWith(replacement);
  for (auto [index, layer] : llvm::enumerate(llvm::reverse(layers))) {
    layer->erase();
    if (index + 1 == layers.size())
      continue;
    const RNNLink &link = links[layers.size() - 2 - index];
    if (link.chain)
      eraseRowChain(*link.chain);
    if (LinearOp projection = link.projection)
      projection->erase();
  }
}

/// The stacks of `Recurrence` ops in `root`, each as its first layer and
/// the links after it, cut at `maxLayers` (0: no limit); remarks on every
/// layer that could not join the one before.
template <typename Recurrence, typename LinkT>
SmallVector<std::pair<Recurrence, SmallVector<LinkT>>>
findStacks(Operation *root, int64_t maxLayers, bool unitSteps, StringRef pass) {
  SmallVector<Recurrence> recurrences;
  root->walk([&](Recurrence op) { recurrences.push_back(op); });
  DenseSet<Operation *> stacked;
  SmallVector<std::pair<Recurrence, SmallVector<LinkT>>> stacks;
  for (Recurrence head : recurrences) {
    if (stacked.contains(head))
      continue;
    SmallVector<Recurrence> layers = {head};
    SmallVector<LinkT> links;
    std::string whyNot;
    bool cutAtMaxLayers = false;
    while (std::optional<LinkT> link =
               nextLayer(head, layers.back(), layers, whyNot, unitSteps)) {
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
      remarkMissed(followingLayer(layers.back()), pass,
                   "this layer starts a new wavefront instead of joining "
                   "the one of the layer before it",
                   whyNot);
    else if (!whyNot.empty())
      remarkMissed(followingLayer(layers.back()), pass,
                   "this layer runs as a time loop of its own, not in one "
                   "wavefront with the layer before it",
                   whyNot);
    if (links.empty())
      continue;
    for (Recurrence layer : layers)
      stacked.insert(layer);
    stacks.emplace_back(head, std::move(links));
  }
  return stacks;
}

struct WavefrontPass : mlir::recur::impl::WavefrontBase<WavefrontPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto &[head, links] : findStacks<LSTMRecurrenceOp, Link>(
             getOperation(), maxLayers, unitSteps, getArgument()))
      formWavefront(head, links);
    for (auto &[head, links] : findStacks<RNNOp, RNNLink>(
             getOperation(), maxLayers, unitSteps, getArgument()))
      formWavefront(head, links);
  }
};

} // namespace
