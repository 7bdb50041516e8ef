//===- StationaryWeights.cpp - a block per group of units, weights on chip ===//
//
// Mapped like any loop nest, a fused LSTM step gives each block 256
// consecutive (batch row, unit, layer) iterations: every block reads the
// recurrent weights of the units it happens to cover from L2 at every step,
// each row once per batch row. Here the step is scheduled the way a
// persistent RNN kernel is written by hand: a block owns a group of U hidden
// units of one layer, for every batch row, and keeps the four gate rows of
// those units of every weight the step reads in shared memory; its threads
// then read the weights from there, all at once for a warp (the batch row
// is the fastest index). recur-gpu-persistent-kernels loads them once per
// kernel instead of once per step when every block owns one group.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"
#include "recur/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUSTATIONARYWEIGHTS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// What recur.unit_step says about a fused step.
struct UnitStep {
  int64_t batchDim, unitDim;
  std::optional<int64_t> layerDim;
  int64_t hidden;                 // every layer's H
  SmallVector<int64_t> gateTiles; // per layer; 0: PyTorch's layout

  int64_t layers() const { return gateTiles.size(); }
  /// Rows between gate g and gate g + 1 of one unit in layer `layer`'s
  /// weights.
  int64_t gateStride(int64_t layer) const {
    return gateTiles[layer] ? gateTiles[layer] : hidden;
  }
};

std::optional<UnitStep> readUnitStep(linalg::GenericOp step) {
  auto fields = step->getAttrOfType<DictionaryAttr>(recur::kUnitStepAttrName);
  if (!fields)
    return std::nullopt;
  auto batch = fields.getAs<IntegerAttr>("batch");
  auto unit = fields.getAs<IntegerAttr>("unit");
  auto layer = fields.getAs<IntegerAttr>("layer");
  auto hidden = fields.getAs<DenseI64ArrayAttr>("hidden");
  auto tiles = fields.getAs<DenseI64ArrayAttr>("gate_tiles");
  if (!batch || !unit || !hidden || !tiles || hidden.empty() ||
      hidden.size() != tiles.size() || !llvm::all_equal(hidden.asArrayRef()) ||
      (hidden.size() > 1 && !layer))
    return std::nullopt;
  UnitStep info{batch.getInt(), unit.getInt(), std::nullopt, hidden[0],
                llvm::to_vector(tiles.asArrayRef())};
  if (layer)
    info.layerDim = layer.getInt();
  return info;
}

/// A weight the step reads by its gate rows, and where a block keeps them.
struct StationaryWeight {
  Value buffer;
  int64_t layer;
  int64_t slotColumn; // first column in the shared-memory slot
};

/// The slot: for a group of `units` units, 4 * units rows (gate g of the
/// group's unit j at row g * units + j), each the concatenated rows of the
/// layer's weights.
struct Slot {
  SmallVector<StationaryWeight> weights;
  int64_t units = 0;
  int64_t columns = 0;
  Type elementType;

  bool operator==(const Slot &other) const {
    auto key = [](const Slot &slot) {
      return std::make_tuple(slot.units, slot.columns, slot.elementType);
    };
    auto weightKey = [](const StationaryWeight &weight) {
      return std::make_tuple(weight.buffer, weight.layer, weight.slotColumn);
    };
    return key(*this) == key(other) &&
           llvm::equal(llvm::map_range(weights, weightKey),
                       llvm::map_range(other.weights, weightKey));
  }

  const StationaryWeight *find(Value buffer) const {
    for (const StationaryWeight &weight : weights)
      if (weight.buffer == buffer)
        return &weight;
    return nullptr;
  }
};

/// The case of the layer switch that `op` is in (the body's scf.index_switch
/// on the layer index), or 0 without layers. Null if it is in none.
std::optional<int64_t> layerOf(Operation *op, const UnitStep &info,
                               Block *body) {
  if (!info.layerDim)
    return 0;
  for (Operation *parent = op->getParentOp(); parent && parent->getBlock();
       op = parent, parent = parent->getParentOp()) {
    auto perLayer = dyn_cast<scf::IndexSwitchOp>(parent);
    if (!perLayer)
      continue;
    auto index = perLayer.getArg().getDefiningOp<linalg::IndexOp>();
    if (!index || index->getBlock() != body || index.getDim() != *info.layerDim)
      continue;
    for (auto [value, region] :
         llvm::zip(perLayer.getCases(), perLayer.getCaseRegions()))
      if (&region == op->getParentRegion())
        return value;
    return std::nullopt;
  }
  return std::nullopt;
}

/// The weights the step reads by gate rows: [4H, K] function arguments
/// (weights never change during a run) loaded in the step's body, grouped by
/// layer. Fails if one is read by two layers or outside the layer switch.
FailureOr<Slot> findWeights(linalg::GenericOp step, const UnitStep &info) {
  Slot slot;
  SmallVector<int64_t> layerColumns(info.layers(), 0);
  SmallVector<SmallVector<std::pair<Value, int64_t>>> perLayer(info.layers());
  Block *body = step.getBody();
  WalkResult walk = step.getRegion().walk([&](memref::LoadOp load) {
    auto argument = dyn_cast<BlockArgument>(load.getMemRef());
    auto type = cast<MemRefType>(load.getMemRef().getType());
    if (!argument ||
        !isa<FunctionOpInterface>(argument.getOwner()->getParentOp()) ||
        type.getRank() != 2 || !type.hasStaticShape() ||
        type.getDimSize(0) != 4 * info.hidden)
      return WalkResult::advance();
    std::optional<int64_t> layer = layerOf(load, info, body);
    if (!layer || *layer < 0 || *layer >= info.layers())
      return WalkResult::interrupt();
    if (slot.elementType && slot.elementType != type.getElementType())
      return WalkResult::interrupt();
    slot.elementType = type.getElementType();
    for (const auto &found : perLayer)
      for (auto [buffer, unused] : found)
        if (buffer == argument && &found != &perLayer[*layer])
          return WalkResult::interrupt();
    if (!llvm::is_contained(llvm::make_first_range(perLayer[*layer]),
                            load.getMemRef()))
      perLayer[*layer].push_back({argument, type.getDimSize(1)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !slot.elementType)
    return failure();
  for (auto [layer, weights] : llvm::enumerate(perLayer)) {
    int64_t column = 0;
    for (auto [buffer, columns] : weights) {
      slot.weights.push_back({buffer, static_cast<int64_t>(layer), column});
      column += columns;
    }
    slot.columns = std::max(slot.columns, column);
  }
  return slot;
}

/// The most units (a power of two up to `maxUnits` that divides every
/// layer's gate stride) whose slot fits in `sharedMemoryBytes`; 0 if not
/// even one unit's does.
int64_t unitsPerBlock(const UnitStep &info, const Slot &slot, int64_t maxUnits,
                      int64_t sharedMemoryBytes) {
  int64_t bytes = slot.elementType.getIntOrFloatBitWidth() / 8;
  for (int64_t units = llvm::bit_floor(static_cast<uint64_t>(maxUnits));
       units >= 1; units /= 2) {
    bool divides =
        llvm::all_of(llvm::seq<int64_t>(0, info.layers()), [&](int64_t layer) {
          return info.gateStride(layer) % units == 0;
        });
    if (divides && 4 * units * slot.columns * bytes <= sharedMemoryBytes)
      return units;
  }
  return 0;
}

/// Index arithmetic at a builder's insertion point.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
};

/// The row of gate 0 of unit `unit` in layer `layer`'s weights: j in
/// PyTorch's layout, j + 3K * (j / K) interleaved with tile K (as the
/// conversion's gateRows).
Value firstGateRow(IndexMath &e, const UnitStep &info, int64_t layer,
                   Value unit) {
  int64_t tile = info.gateTiles[layer];
  if (!tile)
    return unit;
  return e.add(unit, e.mul(e.div(unit, e.index(tile)), e.index(3 * tile)));
}

/// Copies the rows of group `firstUnit`'s units of every weight of `layer`
/// into `slot`, the block's `threads` threads sharing out the elements
/// (consecutive threads, consecutive columns).
void emitLoadLayer(IndexMath &e, const UnitStep &info, const Slot &slot,
                   Value slotBuffer, int64_t layer, Value firstUnit,
                   Value thread, int64_t threads) {
  Value first = firstGateRow(e, info, layer, firstUnit);
  for (const StationaryWeight &weight : slot.weights) {
    if (weight.layer != layer)
      continue;
    int64_t columns = cast<MemRefType>(weight.buffer.getType()).getDimSize(1);
    scf::ForOp::create(
        e.b, e.loc, thread, e.index(4 * slot.units * columns), e.index(threads),
        ValueRange(),
        [&](OpBuilder &nb, Location loc, Value element, ValueRange) {
          IndexMath n{nb, loc};
          Value slotRow = n.div(element, n.index(columns));
          Value column = n.rem(element, n.index(columns));
          Value gate = n.div(slotRow, n.index(slot.units));
          Value unit = n.rem(slotRow, n.index(slot.units));
          Value row = n.add(
              first, n.add(n.mul(gate, n.index(info.gateStride(layer))), unit));
          Value value = memref::LoadOp::create(nb, loc, weight.buffer,
                                               ValueRange{row, column});
          memref::StoreOp::create(
              nb, loc, value, slotBuffer,
              ValueRange{slotRow, n.add(column, n.index(weight.slotColumn))});
          scf::YieldOp::create(nb, loc);
        });
  }
}

/// The staging of a group's weights, between two block barriers: an scf.if
/// marked kStageWeightsAttrName, always taken here;
/// recur-gpu-persistent-kernels takes it only when a block owns several
/// groups, and otherwise loads the weights once before the time loop.
void emitStage(IndexMath &e, const UnitStep &info, const Slot &slot,
               Value slotBuffer, Value layer, Value firstUnit, Value thread,
               int64_t threads) {
  Value always = arith::ConstantIntOp::create(e.b, e.loc, 1, 1);
  auto stage =
      scf::IfOp::create(e.b, e.loc, always, [&](OpBuilder &nb, Location loc) {
        IndexMath n{nb, loc};
        // Threads may still read the group staged before.
        gpu::BarrierOp::create(nb, loc);
        if (!info.layerDim) {
          emitLoadLayer(n, info, slot, slotBuffer, 0, firstUnit, thread,
                        threads);
        } else {
          auto perLayer = scf::IndexSwitchOp::create(
              nb, loc, TypeRange(), layer,
              llvm::to_vector(llvm::seq<int64_t>(0, info.layers())),
              info.layers());
          OpBuilder::InsertionGuard guard(nb);
          nb.createBlock(&perLayer.getDefaultRegion());
          scf::YieldOp::create(nb, loc);
          for (int64_t index = 0; index < info.layers(); ++index) {
            nb.createBlock(&perLayer.getCaseRegions()[index]);
            IndexMath c{nb, loc};
            emitLoadLayer(c, info, slot, slotBuffer, index, firstUnit, thread,
                          threads);
            scf::YieldOp::create(nb, loc);
          }
        }
        gpu::BarrierOp::create(nb, loc);
        scf::YieldOp::create(nb, loc);
      });
  stage->setAttr(recur::kStageWeightsAttrName, e.b.getUnitAttr());
}

/// The element of `operand` that iteration `ivs` of `step` reads or writes
/// (its indexing map is a projected permutation).
SmallVector<Value> elementIndices(linalg::GenericOp step, OpOperand &operand,
                                  ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr result : step.getMatchingIndexingMap(&operand).getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(result).getPosition()]);
  return indices;
}

/// Whether `value` is the same for every iteration of `step` (so for every
/// thread of a block, which owns one layer at one time step): defined
/// outside the step, the layer's index, or computed from such values alone.
bool isUniform(Value value, linalg::GenericOp step, const UnitStep &info) {
  Operation *definition = value.getDefiningOp();
  if (!definition)
    return !step.getRegion().isAncestor(value.getParentRegion());
  if (!step->isProperAncestor(definition))
    return true;
  if (auto index = dyn_cast<linalg::IndexOp>(definition))
    return info.layerDim && index.getDim() == *info.layerDim;
  return definition->getNumRegions() == 0 && isMemoryEffectFree(definition) &&
         llvm::all_of(definition->getOperands(), [&](Value operand) {
           return isUniform(operand, step, info);
         });
}

/// Whether `loop`, in `step`'s body, is a sum that the threads of one
/// iteration can share: every value it carries is an f32 accumulated by one
/// addf, and every condition around it is uniform, so that all threads of a
/// warp reach the shuffles after it together.
bool isLaneSplittableSum(scf::ForOp loop, linalg::GenericOp step,
                         const UnitStep &info) {
  if (loop.getNumRegionIterArgs() == 0)
    return false;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [position, carried] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (!carried.getType().isF32() || !carried.hasOneUse())
      return false;
    auto add = dyn_cast<arith::AddFOp>(*carried.getUsers().begin());
    if (!add || add->getBlock() != loop.getBody() ||
        add.getLhs() == add.getRhs() || !add->hasOneUse() ||
        yield.getOperand(position) != add.getResult())
      return false;
  }
  for (Operation *parent = loop->getParentOp(); parent != step;
       parent = parent->getParentOp()) {
    Value condition;
    if (auto branch = dyn_cast<scf::IfOp>(parent))
      condition = branch.getCondition();
    else if (auto cases = dyn_cast<scf::IndexSwitchOp>(parent))
      condition = cases.getArg();
    if (!condition || !isUniform(condition, step, info))
      return false;
  }
  return true;
}

/// Splits `loops` (clones of lane-splittable sums, in program order) across
/// the `lanes` consecutive threads of an iteration, `lane` being this
/// thread's: each sums every lanes-th term from its own, the first lane
/// adding the initial value, and a butterfly of xor shuffles over offsets
/// below `lanes` (at most `maxLanes`) leaves every lane with the total. A
/// loop whose sums only seed later split loops passes them on unreduced.
void splitAcrossLanes(RewriterBase &rewriter, ArrayRef<scf::ForOp> loops,
                      Value lane, Value lanes, int64_t maxLanes) {
  llvm::SmallPtrSet<Operation *, 8> split;
  for (scf::ForOp loop : loops)
    split.insert(loop);
  DenseSet<Value> partialSums;
  for (scf::ForOp loop : loops) {
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    IndexMath e{rewriter, loc};
    Value firstLane = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, lane, e.index(0));
    Value zero = arith::ConstantFloatOp::create(
        rewriter, loc, rewriter.getF32Type(), APFloat(0.0f));
    rewriter.modifyOpInPlace(loop, [&] {
      for (OpOperand &init : loop.getInitArgsMutable())
        if (!partialSums.contains(init.get()))
          init.set(arith::SelectOp::create(rewriter, loc, firstLane, init.get(),
                                           zero));
      loop.setLowerBound(
          e.add(loop.getLowerBound(), e.mul(lane, loop.getStep())));
      loop.setStep(e.mul(loop.getStep(), lanes));
    });

    bool seedsSplitLoops = llvm::all_of(loop->getUses(), [&](OpOperand &use) {
      auto next = dyn_cast<scf::ForOp>(use.getOwner());
      return next && split.contains(next) &&
             llvm::is_contained(
                 llvm::make_pointer_range(next.getInitArgsMutable()), &use);
    });
    if (seedsSplitLoops && !loop->use_empty()) {
      partialSums.insert_range(loop.getResults());
      continue;
    }
    rewriter.setInsertionPointAfter(loop);
    SmallVector<Value> sums(loop.getResults());
    Operation *firstRound = nullptr;
    for (int64_t offset = maxLanes / 2; offset >= 1; offset /= 2) {
      Value active = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, e.index(offset), lanes);
      auto round = scf::IfOp::create(
          rewriter, loc, active,
          [&](OpBuilder &b, Location loc) {
            SmallVector<Value> added;
            for (Value sum : sums) {
              Value other =
                  gpu::ShuffleOp::create(b, loc, sum, offset,
                                         /*width=*/32, gpu::ShuffleMode::XOR)
                      .getShuffleResult();
              added.push_back(arith::AddFOp::create(b, loc, sum, other));
            }
            scf::YieldOp::create(b, loc, added);
          },
          [&](OpBuilder &b, Location loc) {
            scf::YieldOp::create(b, loc, sums);
          });
      sums.assign(round.getResults().begin(), round.getResults().end());
      if (!firstRound)
        firstRound = round;
    }
    for (auto [result, sum] : llvm::zip(loop.getResults(), sums))
      rewriter.replaceUsesWithIf(result, sum, [&](OpOperand &use) {
        return !firstRound->isAncestor(use.getOwner());
      });
  }
}

/// Replaces `step` by a loop over groups (mapped to blocks) of a loop over
/// `threads` threads. An iteration (unit, batch row) of the group, batch row
/// fastest, is run by `lanes` consecutive threads, which share its sums over
/// K (splitAcrossLanes): as many as leave no thread idle, up to `maxLanes`,
/// so that a small batch still keeps the block busy. Every thread makes the
/// same number of trips, so that warps reach the shuffles whole: threads
/// past the last iteration repeat it and store nothing.
void scheduleByUnitGroups(RewriterBase &rewriter, linalg::GenericOp step,
                          const UnitStep &info, const Slot &slot,
                          Value slotBuffer, int64_t threads, int64_t maxLanes) {
  Location loc = step.getLoc();
  MLIRContext *context = rewriter.getContext();
  SmallVector<scf::ForOp> sums;
  step.getRegion().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (isLaneSplittableSum(loop, step, info))
      sums.push_back(loop);
  });
  // A shuffle needs whole warps.
  if (sums.empty() || threads % 32 != 0)
    maxLanes = 1;
  maxLanes = llvm::bit_floor(
      static_cast<uint64_t>(std::clamp<int64_t>(maxLanes, 1, 32)));

  rewriter.setInsertionPoint(step);
  IndexMath e{rewriter, loc};
  SmallVector<Range, 4> ranges = cast<linalg::LinalgOp>(step.getOperation())
                                     .createLoopRanges(rewriter, loc);
  Value batch = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                ranges[info.batchDim].size);
  int64_t groupsPerLayer = info.hidden / slot.units;
  auto groupLoop = scf::ParallelOp::create(
      rewriter, loc, e.index(0), e.index(groupsPerLayer * info.layers()),
      e.index(1));
  auto mapping = [&](gpu::Processor processor) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
    return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity,
                                                identity);
  };
  (void)gpu::setMappingAttr(groupLoop, {mapping(gpu::Processor::BlockX)});

  rewriter.setInsertionPointToStart(groupLoop.getBody());
  Value group = groupLoop.getInductionVars()[0];
  Value layer = e.div(group, e.index(groupsPerLayer));
  Value firstUnit =
      e.mul(e.rem(group, e.index(groupsPerLayer)), e.index(slot.units));
  auto threadLoop = scf::ParallelOp::create(rewriter, loc, e.index(0),
                                            e.index(threads), e.index(1));
  (void)gpu::setMappingAttr(threadLoop, {mapping(gpu::Processor::ThreadX)});

  rewriter.setInsertionPointToStart(threadLoop.getBody());
  Value thread = threadLoop.getInductionVars()[0];
  emitStage(e, info, slot, slotBuffer, layer, firstUnit, thread, threads);
  Value iterations = e.mul(e.index(slot.units), batch);
  Value lanes = e.index(1);
  for (int64_t candidate = 2; candidate <= maxLanes; candidate *= 2) {
    Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                       e.mul(iterations, e.index(candidate)),
                                       e.index(threads));
    lanes =
        arith::SelectOp::create(rewriter, loc, fits, e.index(candidate), lanes);
  }
  Value work = e.mul(iterations, lanes);
  Value trips = e.div(e.add(work, e.index(threads - 1)), e.index(threads));
  auto elements = scf::ForOp::create(
      rewriter, loc, thread, e.mul(trips, e.index(threads)), e.index(threads));
  rewriter.setInsertionPointToStart(elements.getBody());
  Value element = elements.getInductionVar();
  Value lane = e.rem(element, lanes);
  Value iteration = arith::MinUIOp::create(rewriter, loc, e.div(element, lanes),
                                           e.sub(iterations, e.index(1)));
  Value stores = arith::AndIOp::create(
      rewriter, loc,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, element,
                            work),
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane,
                            e.index(0)));
  SmallVector<Value> ivs(step.getNumLoops());
  ivs[info.batchDim] = e.rem(iteration, batch);
  ivs[info.unitDim] = e.add(firstUnit, e.div(iteration, batch));
  if (info.layerDim)
    ivs[*info.layerDim] = layer;

  IRMapping map;
  Block *body = step.getBody();
  for (OpOperand &operand : step->getOpOperands()) {
    BlockArgument argument = step.getMatchingBlockArgument(&operand);
    if (!argument.use_empty())
      map.map(argument,
              memref::LoadOp::create(rewriter, loc, operand.get(),
                                     elementIndices(step, operand, ivs)));
  }
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    rewriter.clone(op, map);
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  scf::IfOp::create(rewriter, loc, stores, [&](OpBuilder &b, Location loc) {
    for (auto [value, operand] :
         llvm::zip(yield.getValues(), step.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, map.lookupOrDefault(value), operand.get(),
                              elementIndices(step, operand, ivs));
    scf::YieldOp::create(b, loc);
  });
  if (maxLanes > 1)
    splitAcrossLanes(rewriter,
                     llvm::map_to_vector(sums,
                                         [&](scf::ForOp loop) {
                                           return cast<scf::ForOp>(
                                               map.lookup(loop.getOperation()));
                                         }),
                     lane, lanes, maxLanes);

  // The weights' loads read the slot: gate g of unit firstUnit + j, at row
  // first + g * stride + j of the weight, is at slot row g * U + j.
  elements.getBody()->walk([&](memref::LoadOp load) {
    const StationaryWeight *weight = slot.find(load.getMemRef());
    if (!weight)
      return;
    rewriter.setInsertionPoint(load);
    IndexMath n{rewriter, load.getLoc()};
    Value offset = n.sub(load.getIndices()[0],
                         firstGateRow(n, info, weight->layer, firstUnit));
    Value stride = n.index(info.gateStride(weight->layer));
    Value slotRow = n.add(n.mul(n.div(offset, stride), n.index(slot.units)),
                          n.rem(offset, stride));
    Value column = n.add(load.getIndices()[1], n.index(weight->slotColumn));
    rewriter.replaceOpWithNewOp<memref::LoadOp>(load, slotBuffer,
                                                ValueRange{slotRow, column});
  });
  rewriter.eraseOp(step);
}

/// Whether `step` can be scheduled by unit groups: buffers, one iteration
/// per output element (projected permutation maps), a body that writes no
/// memory (a thread may repeat an iteration) and has linalg.index only in
/// its own block, the unit dimension of extent H.
bool schedulable(linalg::GenericOp step, const UnitStep &info) {
  if (!step.hasPureBufferSemantics() || step.getNumReductionLoops() != 0)
    return false;
  for (AffineMap map : step.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return false;
  SmallVector<int64_t> ranges = step.getStaticLoopRanges();
  if (ranges[info.unitDim] != info.hidden ||
      (info.layerDim && ranges[*info.layerDim] != info.layers()))
    return false;
  WalkResult walk = step.getRegion().walk([&](Operation *op) {
    if (isa<linalg::IndexOp>(op) && op->getBlock() != step.getBody())
      return WalkResult::interrupt();
    if (hasEffect<MemoryEffects::Write>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

struct GpuStationaryWeightsPass
    : mlir::recur::impl::GpuStationaryWeightsBase<GpuStationaryWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> steps;
    getOperation()->walk([&](linalg::GenericOp step) {
      if (step->hasAttr(recur::kUnitStepAttrName))
        steps.push_back(step);
    });
    IRRewriter rewriter(&getContext());
    // Steps that read the same weights in the same way (the two steps of a
    // double-buffered time loop) share a slot, so that their kernel's
    // shared memory holds them once.
    SmallVector<std::pair<Slot, Value>> slots;
    for (linalg::GenericOp step : steps) {
      std::optional<UnitStep> info = readUnitStep(step);
      if (!info || !schedulable(step, *info))
        continue;
      FailureOr<Slot> slot = findWeights(step, *info);
      if (failed(slot))
        continue;
      slot->units = unitsPerBlock(*info, *slot, maxUnits, sharedMemoryBytes);
      // Too wide for shared memory: the step keeps reading them from L2.
      if (slot->units == 0)
        continue;
      auto shared = llvm::find_if(
          slots, [&](const auto &entry) { return entry.first == *slot; });
      if (shared == slots.end()) {
        // A shared-memory buffer at the function's entry, made a workgroup
        // attribution of the kernel that uses it by
        // recur-gpu-workgroup-attributions.
        rewriter.setInsertionPointToStart(
            &getOperation().getFunctionBody().front());
        auto type = MemRefType::get(
            {4 * slot->units, slot->columns}, slot->elementType, AffineMap(),
            gpu::AddressSpaceAttr::get(&getContext(),
                                       gpu::AddressSpace::Workgroup));
        slots.push_back(
            {*slot, memref::AllocOp::create(rewriter, step.getLoc(), type)});
        shared = std::prev(slots.end());
      }
      scheduleByUnitGroups(rewriter, step, *info, *slot, shared->second,
                           blockSize, maxLanes);
    }
  }
};

} // namespace
