//===- FuseCellStep.cpp - a cell's tail on its product's register tile ----===//
//
// recur.rnn cell:
//   %p   = recur.linear %h, %w bias(%b)                   [B, G H]
//   %p_g = tensor.extract_slice %p[0, g H] [B, H]         the gates
//   %out = linalg.generic ins(%p_0, ..., %other...)        one pointwise nest
// becomes
//   %p   = recur.linear %h, %w' bias(%b')    w', b' gate-interleaved, tile K
//   %out = collapse(linalg.generic over (b, q, l)
//            ins(expand(%p)[b, q, g, l], expand(%other)[b, q, l], ...))
// so that a register tile of the product over one panel (G K columns: the G
// gates of K units) holds everything the tail needs for those units. The
// decision is recorded in the IR's layout; the CPU's kernel emitter
// (recur-vectorize-packed-matmuls) fuses the two.
//
//===----------------------------------------------------------------------===//

#include "RowwiseOps.h"
#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/GateSums.h"
#include "recur/Utils/Remarks.h"
#include "recur/Utils/SplitLast.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FUSECELLSTEP
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// A cell's recurrent product and the one pointwise loop nest (the tail)
/// that reads its G gates of H units.
struct CellStep {
  LinearOp product;
  linalg::GenericOp tail;
  int64_t hidden = 0, gates = 0;
  /// The product's slices, each with its gate.
  llvm::DenseMap<Value, int64_t> gateOf;
};

/// Whether `size` is the cell's batch: the product's static rows, or the
/// size of dimension 0 of x_t, a state or the product's input (the rows
/// the verifier makes equal).
bool isWholeBatch(OpFoldResult size, RNNOp rnn, LinearOp product) {
  auto type = cast<RankedTensorType>(product.getType());
  if (std::optional<int64_t> rows = getConstantIntValue(size))
    return *rows == type.getDimSize(0);
  auto dim = dyn_cast<Value>(size).getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index || *index != 0)
    return false;
  Value source = dim.getSource();
  auto argument = dyn_cast<BlockArgument>(source);
  return source == product.getInput() || source == product.getResult() ||
         (argument && argument.getOwner() == &rnn.getCell() &&
          !rnn.getCapturedOperand(argument));
}

constexpr const char *kReducedGates =
    "the product's gates are reduced over their row (a layer norm's "
    "statistics), of which a register tile holds a part";

constexpr const char *kReducedGatesOnGpu =
    "the product's gates are reduced over their row (a layer norm's "
    "statistics), whose units span blocks, by a tail not all rowwise: the "
    "product runs as a unit step with its weight on chip, its tail as loop "
    "nests of their own";

/// Whether `product` is one of [B, N] rows with a captured static weight
/// (and bias): a unit step can compute it.
bool isStaticProduct(RNNOp rnn, LinearOp product) {
  auto type = cast<RankedTensorType>(product.getType());
  auto isStatic = [](OpOperand *capture) {
    return cast<RankedTensorType>(capture->get().getType()).hasStaticShape();
  };
  OpOperand *weight = rnn.getCapturedOperand(product.getWeight());
  OpOperand *bias =
      product.getBias() ? rnn.getCapturedOperand(product.getBias()) : nullptr;
  return type.getRank() == 2 && !type.isDynamicDim(1) && weight &&
         isStatic(weight) && (!product.getBias() || (bias && isStatic(bias)));
}

/// `product` and the tail that reads its gates, if the tail can run on the
/// product's tiles; otherwise says why in `whyNot`.
std::optional<CellStep> matchCellStep(RNNOp rnn, LinearOp product,
                                      std::string &whyNot) {
  auto fail = [&](const Twine &reason) -> std::optional<CellStep> {
    whyNot = reason.str();
    return std::nullopt;
  };
  auto type = cast<RankedTensorType>(product.getType());
  auto weightType = dyn_cast<RankedTensorType>(product.getWeight().getType());
  Value bias = product.getBias();
  OpOperand *weightCapture = rnn.getCapturedOperand(product.getWeight());
  OpOperand *biasCapture = bias ? rnn.getCapturedOperand(bias) : nullptr;
  if (!weightCapture || (bias && !biasCapture))
    return fail(
        "the product's weight or bias is computed in the cell, not captured");
  auto isStatic = [](OpOperand *capture) {
    return cast<RankedTensorType>(capture->get().getType()).hasStaticShape();
  };
  if (type.getRank() != 2 || type.isDynamicDim(1) || !weightType ||
      weightType.getRank() != 2 || !isStatic(weightCapture) ||
      (biasCapture && !isStatic(biasCapture)))
    return fail("the product is not one of [B, K] rows with a static weight");
  CellStep step;
  step.product = product;
  int64_t columns = type.getDimSize(1);
  for (Operation *user : product->getUsers()) {
    // The whole product read at once is its one gate (an Elman RNN's).
    Value gate = product.getResult();
    std::optional<int64_t> rowOffset = 0, column = 0, width = columns;
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      rowOffset = column = width = std::nullopt;
      if (slice.getType().getRank() == 2 && slice.hasUnitStride() &&
          isWholeBatch(slice.getMixedSizes()[0], rnn, product)) {
        rowOffset = getConstantIntValue(slice.getMixedOffsets()[0]);
        column = getConstantIntValue(slice.getMixedOffsets()[1]);
        width = getConstantIntValue(slice.getMixedSizes()[1]);
      }
      gate = slice.getResult();
    } else if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      if (generic.getNumReductionLoops() != 0)
        return fail(kReducedGates);
    } else {
      rowOffset = std::nullopt;
    }
    if (!rowOffset || *rowOffset != 0 || !column || !width)
      return fail("the product is read other than as column slices of all "
                  "rows (the gates)");
    if (step.hidden && *width != step.hidden)
      return fail("the product's column slices differ in width");
    step.hidden = *width;
    if (*column % step.hidden != 0)
      return fail("the product's column slices are not whole gates");
    step.gateOf[gate] = *column / step.hidden;
  }
  if (step.gateOf.empty())
    return fail("nothing reads the product");
  if (columns % step.hidden != 0)
    return fail("the product's columns are not whole gates of " +
                Twine(step.hidden) + " units");
  step.gates = columns / step.hidden;
  for (auto [slice, gate] : step.gateOf)
    for (OpOperand &use : slice.getUses()) {
      auto tail = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (tail && tail.getNumReductionLoops() != 0)
        return fail(kReducedGates);
      if (!tail || (step.tail && tail != step.tail) || !tail.isDpsInput(&use) ||
          !tail.getMatchingIndexingMap(&use).isIdentity())
        return fail("the product's gates are not all read, and only read, by "
                    "one pointwise loop nest");
      step.tail = tail;
    }
  linalg::GenericOp tail = step.tail;
  if (!tail.hasPureTensorSemantics() || tail.getNumLoops() != 2 ||
      tail.getNumParallelLoops() != 2 || tail.hasIndexSemantics())
    return fail("the loop nest reading its gates is not pointwise over "
                "[B, H]");
  MLIRContext *context = product.getContext();
  AffineMap columnMap = AffineMap::get(2, 0, getAffineDimExpr(1, context));
  for (OpOperand &operand : tail->getOpOperands()) {
    if (step.gateOf.contains(operand.get()))
      continue;
    AffineMap map = tail.getMatchingIndexingMap(&operand);
    auto operandType = dyn_cast<RankedTensorType>(operand.get().getType());
    bool row = operandType && operandType.getRank() == 2 &&
               operandType.getDimSize(1) == step.hidden && map.isIdentity();
    bool column = operandType && operandType.getRank() == 1 &&
                  operandType.getDimSize(0) == step.hidden && map == columnMap;
    if (!row && !column)
      return fail("the loop nest reading its gates also reads or writes "
                  "values that are neither [B, " +
                  Twine(step.hidden) + "] rows nor [" + Twine(step.hidden) +
                  "] columns");
  }
  return step;
}

/// Whether everything the cell computes from `product` is rowwise (each row
/// from its own row of the product, x_t and the state: a layer norm over
/// the gates, the gates, the new state): on the CPU its loop nests then
/// run as one loop over the rows after the product, the row's reductions
/// inside it (recur-vectorize-elementwise), which is the fast path for a
/// tail a register tile cannot hold.
bool isRowLocalTail(RNNOp rnn, LinearOp product) {
  DenseSet<Value> rows = {product.getResult()};
  rows.insert(rnn.getStepInput());
  for (BlockArgument state : rnn.getStateArguments())
    rows.insert(state);
  auto isRowCount = [&](Value value) { return readsRowCount(value, rows); };
  DenseSet<Value> fromProduct = {product.getResult()};
  auto isRow = [&](Value value) {
    return rows.contains(value) || isFreshRows(value, isRowCount);
  };
  // Captures, constants, row counts, and what the cell computes from them
  // alone (a gate's slice of a layer norm's scale).
  DenseSet<Value> computedInvariants;
  auto isInvariant = [&](Value value) {
    return rnn.getCapturedOperand(value) ||
           matchPattern(value, m_Constant()) || isRowCount(value) ||
           computedInvariants.contains(value);
  };
  RowRoles roles{isRow, isInvariant, isRowCount};
  for (Operation &op : rnn.getCell().without_terminator()) {
    if (isa<tensor::DimOp, tensor::EmptyOp, arith::ConstantOp>(op))
      continue;
    if (isPure(&op) && op.getNumRegions() == 0 &&
        llvm::all_of(op.getOperands(), isInvariant)) {
      computedInvariants.insert(op.result_begin(), op.result_end());
      continue;
    }
    bool rowwise = isRowwise(&op, roles);
    if (rowwise)
      rows.insert(op.result_begin(), op.result_end());
    if (llvm::any_of(op.getOperands(), [&](Value operand) {
          return fromProduct.contains(operand);
        })) {
      if (!rowwise)
        return false;
      fromProduct.insert(op.result_begin(), op.result_end());
    }
  }
  return true;
}

/// The loop nests that read `product` (directly or through slices).
SetVector<linalg::GenericOp> gateReaders(LinearOp product) {
  SetVector<linalg::GenericOp> readers;
  for (Operation *user : product->getUsers()) {
    if (auto generic = dyn_cast<linalg::GenericOp>(user))
      readers.insert(generic);
    if (isa<tensor::ExtractSliceOp>(user))
      for (Operation *reader : user->getUsers())
        if (auto generic = dyn_cast<linalg::GenericOp>(reader))
          readers.insert(generic);
  }
  return readers;
}

/// Merges the loop nests that read `product`'s gates where one feeds
/// another: the producer is fused into the later nest, which also writes
/// the producer's result where anything else reads it (a peephole LSTM's
/// c_t, read by the nest of h_t and yielded as the new state). Nothing is
/// computed twice: each merge replaces both nests.
void mergeGateReaders(LinearOp product) {
  IRRewriter rewriter(product.getContext());
  bool merged = true;
  while (merged) {
    merged = false;
    SetVector<linalg::GenericOp> readers = gateReaders(product);
    for (linalg::GenericOp consumer : readers) {
      for (OpOperand *operand : consumer.getDpsInputOperands()) {
        auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
        // The fused nest stands where the consumer is: the producer's
        // other readers must come after it.
        if (!producer || !readers.contains(producer) ||
            !linalg::areElementwiseOpsFusable(operand) ||
            !llvm::all_of(producer->getUsers(), [&](Operation *user) {
              return user == consumer || consumer->isBeforeInBlock(user);
            }))
          continue;
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> fused =
            linalg::fuseElementwiseOps(rewriter, operand);
        if (failed(fused))
          continue;
        for (auto [old, replacement] : fused->replacements)
          rewriter.replaceAllUsesWith(old, replacement);
        rewriter.eraseOp(consumer);
        if (producer->use_empty())
          rewriter.eraseOp(producer);
        merged = true;
        break;
      }
      if (merged)
        break;
    }
  }
}

/// K: the most units per tile, a multiple of `vectorWidth` that divides
/// `hidden`, with `gates` x K at most `panelColumns` (or one vector per
/// gate); 0 if the vector width does not divide `hidden`.
int64_t unitTileFor(int64_t hidden, int64_t gates, int64_t vectorWidth,
                    int64_t panelColumns) {
  int64_t widest =
      std::max<int64_t>(1, panelColumns / (gates * vectorWidth)) * vectorWidth;
  for (int64_t tile = widest; tile >= vectorWidth; tile -= vectorWidth)
    if (hidden % tile == 0)
      return tile;
  return 0;
}

/// The cell's argument for `argument`'s capture gate-interleaved (once per
/// binding, outside the recurrence): the capture itself, replaced, when
/// nothing else in the cell reads it; a new capture otherwise.
Value interleavedCapture(RNNOp rnn, BlockArgument argument, int64_t tile,
                         int64_t gates) {
  OpOperand &capture = *rnn.getCapturedOperand(argument);
  OpBuilder builder(rnn);
  Value interleaved = InterleaveGatesOp::create(builder, capture.get().getLoc(),
                                                capture.get().getType(),
                                                capture.get(), tile, gates);
  if (argument.hasOneUse()) {
    capture.assign(interleaved);
    return argument;
  }
  rnn.getCapturesMutable().append(interleaved);
  return rnn.getCell().addArgument(argument.getType(), argument.getLoc());
}

/// Rewrites `step` as the file comment shows, with tiles of `tile` units.
void layOutForTiles(RNNOp rnn, CellStep &step, int64_t tile) {
  LinearOp product = step.product;
  linalg::GenericOp tail = step.tail;
  int64_t units = step.hidden / tile, gates = step.gates;
  Value weight = interleavedCapture(
      rnn, cast<BlockArgument>(product.getWeight()), tile, gates);
  Value bias =
      product.getBias()
          ? interleavedCapture(rnn, cast<BlockArgument>(product.getBias()),
                               tile, gates)
          : Value();
  // The tail's other operands (views, defined before the product) first,
  // then the product right before the tail: the kernel emitter finds the
  // two next to each other.
  OpBuilder b(tail);
  Location loc = tail.getLoc();
  MLIRContext *context = b.getContext();
  AffineExpr row = b.getAffineDimExpr(0), unitTile = b.getAffineDimExpr(1),
             lane = b.getAffineDimExpr(2);
  AffineMap rowMap = AffineMap::getMultiDimIdentityMap(3, context);
  AffineMap columnMap = AffineMap::get(3, 0, {unitTile, lane}, context);
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  SmallVector<unsigned> gateInputs;
  for (OpOperand &operand : tail->getOpOperands()) {
    auto found = step.gateOf.find(operand.get());
    if (found != step.gateOf.end()) {
      gateInputs.push_back(operand.getOperandNumber());
      inputs.push_back(Value()); // the product's tiles, below
      maps.push_back(AffineMap::get(
          3, 0, {row, unitTile, b.getAffineConstantExpr(found->second), lane},
          context));
      continue;
    }
    Value tiles = splitLast(b, loc, operand.get(), {units, tile});
    bool column = cast<RankedTensorType>(tiles.getType()).getRank() == 2;
    (tail.isDpsInit(&operand) ? inits : inputs).push_back(tiles);
    maps.push_back(column ? columnMap : rowMap);
  }
  auto tiled =
      LinearOp::create(b, product.getLoc(), product.getInput(), weight, bias);
  Value gateTiles = splitLast(b, product.getLoc(), tiled, {units, gates, tile});
  for (unsigned operandNumber : gateInputs)
    inputs[operandNumber] = gateTiles;
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  auto tiledTail = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps,
      SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel));
  tiledTail.getRegion().takeBody(tail.getRegion());
  for (auto [old, result] :
       llvm::zip_equal(tail.getResults(), tiledTail.getResults()))
    old.replaceAllUsesWith(joinLast(b, loc, result, 2));
  tail.erase();
  for (auto [gate, index] : step.gateOf)
    if (gate != product.getResult())
      gate.getDefiningOp()->erase();
  product.erase();
}

/// Rewrites `step` as one loop nest over the tail's (b, j), a
/// recur.unit_step: each iteration sums its unit's G gates over k in
/// registers (the weight's rows g H + j, plus the bias), then runs the
/// tail's body on them. The [B, G H] product never exists. For a target
/// without the CPU's register tile: the GPU, whose
/// recur-gpu-stationary-weights gives blocks groups of units with their
/// weights on chip.
void fuseIntoUnitStep(CellStep &step) {
  LinearOp product = step.product;
  linalg::GenericOp tail = step.tail;
  OpBuilder b(tail);
  Location loc = tail.getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *operand : tail.getDpsInputOperands()) {
    if (step.gateOf.contains(operand->get()))
      continue;
    inputs.push_back(operand->get());
    maps.push_back(tail.getMatchingIndexingMap(operand));
  }
  for (OpOperand &init : tail.getDpsInitsMutable())
    maps.push_back(tail.getMatchingIndexingMap(&init));
  Block &tailBody = tail.getRegion().front();
  auto fused = linalg::GenericOp::create(
      b, loc, tail.getResultTypes(), inputs, tail.getDpsInits(), maps,
      tail.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value row = linalg::IndexOp::create(nb, loc, 0);
        Value unit = linalg::IndexOp::create(nb, loc, 1);
        Type element = getElementTypeOrSelf(product.getType());
        SmallVector<Value> rows, sums;
        for (int64_t gate = 0; gate < step.gates; ++gate) {
          rows.push_back(arith::AddIOp::create(
              nb, loc, unit,
              arith::ConstantIndexOp::create(nb, loc, gate * step.hidden)));
          sums.push_back(
              product.getBias()
                  ? tensor::ExtractOp::create(nb, loc, product.getBias(),
                                              rows.back())
                        .getResult()
                  : arith::ConstantOp::create(nb, loc, element,
                                              nb.getFloatAttr(element, 0.0))
                        .getResult());
        }
        sums =
            accumulateGates(nb, loc, sums, rows,
                            {product.getInput(), {row}, product.getWeight()});
        IRMapping mapping;
        unsigned next = 0;
        for (OpOperand &operand : tail->getOpOperands()) {
          BlockArgument argument = tail.getMatchingBlockArgument(&operand);
          auto gate = step.gateOf.find(operand.get());
          mapping.map(argument,
                      gate != step.gateOf.end() && tail.isDpsInput(&operand)
                          ? sums[gate->second]
                          : args[next++]);
        }
        for (Operation &op : tailBody)
          nb.clone(op, mapping);
      });
  fused->setAttr(RecurDialect::kUnitStepAttrName,
                 UnitStepAttr::get(b.getContext(), /*batch=*/0, /*unit=*/1,
                                   std::nullopt, {step.hidden}, {0},
                                   step.gates));
  tail->replaceAllUsesWith(fused->getResults());
  tail.erase();
  for (auto [gate, index] : step.gateOf)
    if (gate != product.getResult())
      gate.getDefiningOp()->erase();
  product.erase();
}

/// `product` [B, N] alone as a unit step of N one-gate units whose tail
/// writes the sum (what reads it is rowwise but reduces over the row, a
/// layer norm over the gates): the product's weight stays on chip, where
/// a plain loop nest would read it from memory at every step.
void productIntoUnitStep(LinearOp product) {
  OpBuilder b(product->getNextNode());
  Location loc = product.getLoc();
  auto type = cast<RankedTensorType>(product.getType());
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(b, loc, product.getInput(), 0),
      b.getIndexAttr(type.getDimSize(1))};
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  if (init.getType() != type)
    init = tensor::CastOp::create(b, loc, type, init);
  MLIRContext *context = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, context);
  auto sums = linalg::GenericOp::create(
      b, loc, type, ValueRange{product.getResult()}, init,
      ArrayRef<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location loc, ValueRange args) {
        linalg::YieldOp::create(nb, loc, args[0]);
      });
  product.getResult().replaceAllUsesExcept(sums.getResult(0), sums);
  CellStep step;
  step.product = product;
  step.tail = sums;
  step.hidden = type.getDimSize(1);
  step.gates = 1;
  step.gateOf[product.getResult()] = 0;
  fuseIntoUnitStep(step);
}

struct FuseCellStepPass
    : mlir::recur::impl::FuseCellStepBase<FuseCellStepPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (vectorWidth < 0 || panelColumns < 1)
      return emitError(UnknownLoc::get(context))
             << "recur-fuse-cell-step: vector-width must be at least 0 and "
                "panel-columns at least 1";
    return success();
  }

  void runOnOperation() override {
    getOperation()->walk([&](RNNOp rnn) {
      auto missed = [&](Operation *op, const Twine &reason) {
        remarkMissed(op, getArgument(),
                     "the cell's recurrent product and its pointwise tail "
                     "run as separate loop nests (the gates stored and "
                     "re-read)",
                     reason);
      };
      // A target without the CPU's register tile nor unit steps has no
      // fused step for a cell region: said once per recurrence.
      if (vectorWidth == 0 && !unitSteps)
        return missed(rnn, "this target has no fused step for a recur.rnn "
                           "cell (the CPU's register tile takes one)");
      // The first product that qualifies, a recurrent one (of the state)
      // before others: a kernel takes one tail.
      SmallVector<LinearOp> products =
          llvm::to_vector(rnn.getCell().getOps<LinearOp>());
      std::stable_partition(products.begin(), products.end(),
                            [&](LinearOp product) {
                              return llvm::is_contained(rnn.getStateArguments(),
                                                        product.getInput());
                            });
      std::string whyNot;
      Operation *firstProduct = nullptr;
      bool rowLocal = false;
      LinearOp reducedProduct;
      for (LinearOp product : products) {
        if (!firstProduct)
          firstProduct = product;
        mergeGateReaders(product);
        std::string reason;
        std::optional<CellStep> step = matchCellStep(rnn, product, reason);
        if (!step) {
          if (whyNot.empty()) {
            whyNot = reason;
            rowLocal = reason == kReducedGates && isRowLocalTail(rnn, product);
            if (reason == kReducedGates && isStaticProduct(rnn, product))
              reducedProduct = product;
          }
          continue;
        }
        if (vectorWidth == 0) {
          fuseIntoUnitStep(*step);
          return;
        }
        int64_t tile =
            unitTileFor(step->hidden, step->gates, vectorWidth, panelColumns);
        if (!tile) {
          whyNot = "the cell's " + std::to_string(step->hidden) +
                   " units are not whole vectors of " +
                   std::to_string(vectorWidth);
          continue;
        }
        layOutForTiles(rnn, *step, tile);
        return;
      }
      // A layer norm over the gates on the CPU: one loop over the rows
      // after the product is its fast path (isRowLocalTail).
      if (rowLocal && vectorWidth > 0)
        return;
      // On the GPU the product alone keeps its weight on chip. Its rows
      // span blocks, so the tail runs after it (a grid barrier between):
      // a rowwise tail as one group of row ops, a block per row
      // (recur-gpu-row-groups), its fast path; any other as loop nests of
      // its own.
      if (unitSteps && reducedProduct) {
        if (!rowLocal)
          missed(reducedProduct, kReducedGatesOnGpu);
        productIntoUnitStep(reducedProduct);
        return;
      }
      if (firstProduct)
        missed(firstProduct, whyNot);
      else
        missed(rnn, "the cell has no product with a captured weight");
    });
  }
};

} // namespace
