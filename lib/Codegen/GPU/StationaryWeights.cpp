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
// At tf32 and bf16 the step's products (its sums over K) run on tensor
// cores instead: a block's warps compute them for a chunk of batch rows
// into shared memory with MMAs, then its threads run the pointwise tail.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurOps.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUSTATIONARYWEIGHTS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

#define DEBUG_TYPE "recur-gpu-stationary-weights"

using namespace mlir;
using namespace mlir::recur;

namespace {

/// What a fused step's #recur.unit_step says, for layers of one size.
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

UnitStep readUnitStep(UnitStepAttr attr) {
  return {attr.getBatch(), attr.getUnit(), attr.getLayer(), attr.getHidden()[0],
          llvm::to_vector(attr.getGateTiles())};
}

/// A weight the step reads by its gate rows, and where a block keeps them.
struct StationaryWeight {
  Value buffer;
  int64_t layer;
  int64_t slotColumn; // first column in the shared-memory slot
};

/// The elements per slot row on tensor cores: at least `columns`, rows
/// padded so that the 16-byte (f32) or 8-byte (bf16) loads of a quarter or
/// half warp (two or four rows, 4 k of each from each of 4 lanes) fall into
/// different banks.
int64_t tensorCoreStride(int64_t columns, Type operandType) {
  int64_t perWord = 32 / operandType.getIntOrFloatBitWidth();
  int64_t rowWords = operandType.isF32() ? 16 : 8;
  int64_t words = llvm::divideCeil(columns, perWord);
  words += (rowWords - words % 32 + 32) % 32;
  return words * perWord;
}

/// The slot: for a group of `units` units, 4 * units rows (gate g of the
/// group's unit j at row g * units + j), each the concatenated rows of the
/// layer's weights, `stride()` elements apart.
struct Slot {
  SmallVector<StationaryWeight> weights;
  int64_t units = 0;
  int64_t columns = 0;
  Type elementType;
  /// On tensor cores: the MMA operand type the weights are rounded to (f32
  /// holding tf32, or bf16), and how many products a layer has at most (the
  /// block's buffers of sums). Null: SIMT FMAs on the weights as they are.
  Type operandType;
  int64_t productsPerLayer = 0;

  bool operator==(const Slot &other) const {
    auto key = [](const Slot &slot) {
      return std::make_tuple(slot.units, slot.columns, slot.elementType,
                             slot.operandType, slot.productsPerLayer);
    };
    auto weightKey = [](const StationaryWeight &weight) {
      return std::make_tuple(weight.buffer, weight.layer, weight.slotColumn);
    };
    return key(*this) == key(other) &&
           llvm::equal(llvm::map_range(weights, weightKey),
                       llvm::map_range(other.weights, weightKey));
  }

  int64_t stride() const {
    return operandType ? tensorCoreStride(columns, operandType) : columns;
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
/// layer. Fails, saying why in `whyNot`, if one is read by two layers or
/// outside the layer switch.
FailureOr<Slot> findWeights(linalg::GenericOp step, const UnitStep &info,
                            std::string &whyNot) {
  Slot slot;
  SmallVector<int64_t> layerColumns(info.layers(), 0);
  SmallVector<SmallVector<std::pair<Value, int64_t>>> perLayer(info.layers());
  Block *body = step.getBody();
  bool computedWeights = false;
  WalkResult walk = step.getRegion().walk([&](memref::LoadOp load) {
    auto argument = dyn_cast<BlockArgument>(load.getMemRef());
    auto type = cast<MemRefType>(load.getMemRef().getType());
    if (type.getRank() != 2 || !type.hasStaticShape() ||
        type.getDimSize(0) != 4 * info.hidden)
      return WalkResult::advance();
    if (!argument ||
        !isa<FunctionOpInterface>(argument.getOwner()->getParentOp())) {
      computedWeights = true;
      return WalkResult::advance();
    }
    std::optional<int64_t> layer = layerOf(load, info, body);
    if (!layer || *layer < 0 || *layer >= info.layers()) {
      whyNot = "it reads a weight outside its layer's case";
      return WalkResult::interrupt();
    }
    if (slot.elementType && slot.elementType != type.getElementType()) {
      whyNot = "its weights have different element types";
      return WalkResult::interrupt();
    }
    slot.elementType = type.getElementType();
    for (const auto &found : perLayer)
      for (auto [buffer, unused] : found)
        if (buffer == argument && &found != &perLayer[*layer]) {
          whyNot = "two of its layers read the same weight";
          return WalkResult::interrupt();
        }
    if (!llvm::is_contained(llvm::make_first_range(perLayer[*layer]),
                            load.getMemRef()))
      perLayer[*layer].push_back({argument, type.getDimSize(1)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!slot.elementType) {
    whyNot = computedWeights
                 ? "its weights are computed at every run (a training "
                   "step's, which has no weight prologue)"
                 : "it reads no [4H, K] weight by gate rows";
    return failure();
  }
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

/// The most units (a power of two up to `maxUnits`, a multiple of
/// `unitMultiple`, that divides every layer's gate stride) whose slot and
/// `otherBytes(units)` fit in `sharedMemoryBytes`; 0 if none does.
int64_t unitsPerBlock(const UnitStep &info, const Slot &slot, int64_t maxUnits,
                      int64_t sharedMemoryBytes, int64_t unitMultiple,
                      function_ref<int64_t(int64_t)> otherBytes) {
  int64_t bytes = slot.elementType.getIntOrFloatBitWidth() / 8;
  for (int64_t units = llvm::bit_floor(static_cast<uint64_t>(maxUnits));
       units >= unitMultiple; units /= 2) {
    bool divides =
        llvm::all_of(llvm::seq<int64_t>(0, info.layers()), [&](int64_t layer) {
          return info.gateStride(layer) % units == 0;
        });
    if (divides && units % unitMultiple == 0 &&
        4 * units * slot.stride() * bytes + otherBytes(units) <=
            sharedMemoryBytes)
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
          if (slot.operandType)
            value = mlir::recur::gemm::roundToOperandType(nb, loc, value,
                                                          slot.operandType);
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

/// Where a step's schedule stands: in the thread loop of the group loop
/// (mapped to blocks and threads), after the weights' stage.
struct GroupLoops {
  Value layer, firstUnit, thread, batch;
};

/// Creates, before `step` (left in place), the loop over its groups of
/// `slot.units` units (mapped to blocks) and in it the loop over `threads`
/// threads, which stages the group's weights; leaves the insertion point
/// after the stage.
GroupLoops createGroupLoops(RewriterBase &rewriter, linalg::GenericOp step,
                            const UnitStep &info, const Slot &slot,
                            Value slotBuffer, int64_t threads) {
  Location loc = step.getLoc();
  MLIRContext *context = rewriter.getContext();
  rewriter.setInsertionPoint(step);
  IndexMath e{rewriter, loc};
  SmallVector<Range, 4> ranges = cast<linalg::LinalgOp>(step.getOperation())
                                     .createLoopRanges(rewriter, loc);
  GroupLoops loops;
  loops.batch = getValueOrCreateConstantIndexOp(rewriter, loc,
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
  loops.layer = e.div(group, e.index(groupsPerLayer));
  loops.firstUnit =
      e.mul(e.rem(group, e.index(groupsPerLayer)), e.index(slot.units));
  auto threadLoop = scf::ParallelOp::create(rewriter, loc, e.index(0),
                                            e.index(threads), e.index(1));
  (void)gpu::setMappingAttr(threadLoop, {mapping(gpu::Processor::ThreadX)});

  rewriter.setInsertionPointToStart(threadLoop.getBody());
  loops.thread = threadLoop.getInductionVars()[0];
  emitStage(e, info, slot, slotBuffer, loops.layer, loops.firstUnit,
            loops.thread, threads);
  return loops;
}

/// Clones `step`'s body for iteration `ivs` at the insertion point; its
/// results are stored where `stores` holds. Returns the clone's mapping.
IRMapping cloneIteration(RewriterBase &rewriter, linalg::GenericOp step,
                         ArrayRef<Value> ivs, Value stores) {
  Location loc = step.getLoc();
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
  return map;
}

/// The slot row that holds row `row` of `weight` (gate g of unit firstUnit
/// + j, at row first + g * stride + j of the weight, is at slot row g * U +
/// j).
Value slotRowOf(IndexMath &e, const UnitStep &info, const Slot &slot,
                const StationaryWeight &weight, Value row, Value firstUnit) {
  Value offset = e.sub(row, firstGateRow(e, info, weight.layer, firstUnit));
  Value stride = e.index(info.gateStride(weight.layer));
  return e.add(e.mul(e.div(offset, stride), e.index(slot.units)),
               e.rem(offset, stride));
}

/// Makes the weights' loads in `region` read the slot.
void redirectWeightLoads(RewriterBase &rewriter, Region &region,
                         const UnitStep &info, const Slot &slot,
                         Value slotBuffer, Value firstUnit) {
  region.walk([&](memref::LoadOp load) {
    const StationaryWeight *weight = slot.find(load.getMemRef());
    if (!weight)
      return;
    rewriter.setInsertionPoint(load);
    IndexMath n{rewriter, load.getLoc()};
    Value slotRow =
        slotRowOf(n, info, slot, *weight, load.getIndices()[0], firstUnit);
    Value column = n.add(load.getIndices()[1], n.index(weight->slotColumn));
    rewriter.replaceOpWithNewOp<memref::LoadOp>(load, slotBuffer,
                                                ValueRange{slotRow, column});
  });
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

  GroupLoops loops =
      createGroupLoops(rewriter, step, info, slot, slotBuffer, threads);
  IndexMath e{rewriter, loc};
  Value iterations = e.mul(e.index(slot.units), loops.batch);
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
  auto elements =
      scf::ForOp::create(rewriter, loc, loops.thread,
                         e.mul(trips, e.index(threads)), e.index(threads));
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
  ivs[info.batchDim] = e.rem(iteration, loops.batch);
  ivs[info.unitDim] = e.add(loops.firstUnit, e.div(iteration, loops.batch));
  if (info.layerDim)
    ivs[*info.layerDim] = loops.layer;

  IRMapping map = cloneIteration(rewriter, step, ivs, stores);
  if (maxLanes > 1)
    splitAcrossLanes(rewriter,
                     llvm::map_to_vector(sums,
                                         [&](scf::ForOp loop) {
                                           return cast<scf::ForOp>(
                                               map.lookup(loop.getOperation()));
                                         }),
                     lane, lanes, maxLanes);
  redirectWeightLoads(rewriter, elements.getRegion(), info, slot, slotBuffer,
                      loops.firstUnit);
  rewriter.eraseOp(step);
}

//===----------------------------------------------------------------------===//
// The step's products on tensor cores
//===----------------------------------------------------------------------===//

/// k per trip of a product's k loop: each lane loads 4 consecutive k of its
/// rows, which serve two tf32 MMAs (m16n8k8) or one bf16 MMA (m16n8k16).
constexpr int64_t kProductDepthTile = 16;
constexpr int64_t kLaneElements = 4;
/// Batch rows per warp and chunk: an MMA's n.
constexpr int64_t kWarpBatchRows = 8;

/// A sum over K in the step's body that a block computes on tensor cores
/// for all its iterations at once: `scf.for %k = 0 to K` carrying f32 sums,
/// each `sum_g += a[..., k] * w[row_g, k]`, with `a` an activation (indexed
/// by the batch row, values the same for the whole block, and k innermost)
/// and `w` one stationary weight.
struct Product {
  scf::ForOp loop;
  memref::LoadOp activation;
  SmallVector<memref::LoadOp> weightLoads; // by carried sum
  int64_t weight = -1;                     // in Slot::weights
  int64_t depth = 0;                       // K
  int64_t layer = 0;
  int64_t position = 0; // among its layer's products, in program order
};

/// Whether `index` is the step's batch row.
bool isBatchRow(Value index, linalg::GenericOp step, const UnitStep &info) {
  auto loopIndex = index.getDefiningOp<linalg::IndexOp>();
  return loopIndex && loopIndex->getBlock() == step.getBody() &&
         loopIndex.getDim() == info.batchDim;
}

/// `loop` as a Product, if it is one; a sum over K that is not says why in
/// `whyNot`.
std::optional<Product> matchProduct(scf::ForOp loop, linalg::GenericOp step,
                                    const UnitStep &info, const Slot &slot,
                                    std::string &whyNot) {
  if (!isLaneSplittableSum(loop, step, info))
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> stride = getConstantIntValue(loop.getStep());
  if (lower != 0 || stride != 1 || !upper || *upper <= 0) {
    whyNot = "a sum over K does not run over a static 0..K";
    return std::nullopt;
  }
  if (*upper % kProductDepthTile != 0) {
    whyNot = ("a sum over K = " + Twine(*upper) + " is not in whole tiles of " +
              Twine(kProductDepthTile) + " k")
                 .str();
    return std::nullopt;
  }
  Value k = loop.getInductionVar();
  Product product{loop};
  product.depth = *upper;
  for (BlockArgument sum : loop.getRegionIterArgs()) {
    auto add = cast<arith::AddFOp>(*sum.getUsers().begin());
    Value term = add.getLhs() == sum ? add.getRhs() : add.getLhs();
    auto multiply = term.getDefiningOp<arith::MulFOp>();
    if (!multiply || !multiply->hasOneUse())
      return std::nullopt;
    auto lhs = multiply.getLhs().getDefiningOp<memref::LoadOp>();
    auto rhs = multiply.getRhs().getDefiningOp<memref::LoadOp>();
    if (!lhs || !rhs)
      return std::nullopt;
    memref::LoadOp weightLoad = slot.find(lhs.getMemRef()) ? lhs : rhs;
    memref::LoadOp activation = weightLoad == lhs ? rhs : lhs;
    const StationaryWeight *weight = slot.find(weightLoad.getMemRef());
    if (!weight || slot.find(activation.getMemRef()) ||
        (product.activation && product.activation != activation))
      return std::nullopt;
    int64_t index = weight - slot.weights.data();
    if (product.weight >= 0 && product.weight != index)
      return std::nullopt;
    // w[row, k], the row the same at every k.
    if (weightLoad.getIndices()[1] != k ||
        !loop.isDefinedOutsideOfLoop(weightLoad.getIndices()[0]) ||
        cast<MemRefType>(weight->buffer.getType()).getDimSize(1) <
            product.depth)
      return std::nullopt;
    product.activation = activation;
    product.weight = index;
    product.weightLoads.push_back(weightLoad);
  }
  // Nothing else: the activation's load, a load, multiply and add per sum.
  size_t sums = product.weightLoads.size();
  if (loop.getBody()->getOperations().size() != 3 * sums + 2)
    return std::nullopt;
  // a[..., k]: every index but k the batch row or uniform; a buffer the step
  // does not write (later batch rows are read after earlier ones' results
  // are stored).
  memref::LoadOp activation = product.activation;
  ValueRange indices = activation.getIndices();
  if (indices.empty() || indices.back() != k ||
      !isUniform(activation.getMemRef(), step, info) ||
      !activation.getMemRefType().getElementType().isF32())
    return std::nullopt;
  bool batchRow = false;
  for (Value index : indices.drop_back()) {
    if (isBatchRow(index, step, info))
      batchRow = true;
    else if (!isUniform(index, step, info))
      return std::nullopt;
  }
  if (!batchRow ||
      llvm::is_contained(step.getDpsInits(), activation.getMemRef()))
    return std::nullopt;
  std::optional<int64_t> layer = layerOf(loop, info, step.getBody());
  if (!layer)
    return std::nullopt;
  product.layer = *layer;
  return product;
}

/// The step's products, if every load of a stationary weight is in one;
/// otherwise says why in `whyNot`.
FailureOr<SmallVector<Product>> matchProducts(linalg::GenericOp step,
                                              const UnitStep &info,
                                              const Slot &slot,
                                              std::string &whyNot) {
  SmallVector<Product> products;
  SmallVector<int64_t> perLayer(info.layers(), 0);
  llvm::SmallPtrSet<Operation *, 16> covered;
  step.getRegion().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    std::optional<Product> product =
        matchProduct(loop, step, info, slot, whyNot);
    if (!product)
      return;
    product->position = perLayer[product->layer]++;
    for (memref::LoadOp load : product->weightLoads)
      covered.insert(load);
    products.push_back(std::move(*product));
  });
  WalkResult uncovered = step.getRegion().walk([&](memref::LoadOp load) {
    return slot.find(load.getMemRef()) && !covered.contains(load)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (products.empty() || uncovered.wasInterrupted()) {
    if (whyNot.empty())
      whyNot = "a weight is read outside a sum over K of weight rows times "
               "the batch row's inputs";
    return failure();
  }
  return products;
}

/// The block's buffers of sums, [productsPerLayer][batch rows][4U + 1]
/// (f32; the odd row length spreads a warp's stores and loads over the
/// banks), for `threads` threads.
MemRefType sumsType(MLIRContext *context, const Slot &slot, int64_t threads) {
  return MemRefType::get(
      {slot.productsPerLayer, kWarpBatchRows * (threads / 32),
       4 * slot.units + 1},
      Float32Type::get(context), AffineMap(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

/// `value`, uniform in the step (isUniform), at the insertion point outside
/// it: what the step computes it from is cloned, with the layer's index
/// `layer`.
Value materializeUniform(OpBuilder &b, Value value, linalg::GenericOp step,
                         Value layer, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(value))
    return mapped;
  Operation *definition = value.getDefiningOp();
  if (!definition || !step->isProperAncestor(definition))
    return value;
  if (isa<linalg::IndexOp>(definition)) {
    map.map(value, layer);
    return layer;
  }
  for (Value operand : definition->getOperands())
    materializeUniform(b, operand, step, layer, map);
  b.clone(*definition, map);
  return map.lookup(value);
}

/// Whether the block's iterations reach `loop`: the conditions of the
/// scf.if and scf.index_switch ops around it in the step (uniform, as
/// isLaneSplittableSum requires), at the insertion point.
Value reachedCondition(OpBuilder &b, Location loc, scf::ForOp loop,
                       linalg::GenericOp step, Value layer, IRMapping &map) {
  Value reached = arith::ConstantIntOp::create(b, loc, 1, 1);
  auto both = [&](Value condition) {
    reached = arith::AndIOp::create(b, loc, reached, condition);
  };
  Operation *op = loop;
  for (Operation *parent = loop->getParentOp(); parent != step;
       op = parent, parent = parent->getParentOp()) {
    Region *region = op->getParentRegion();
    if (auto branch = dyn_cast<scf::IfOp>(parent)) {
      Value condition =
          materializeUniform(b, branch.getCondition(), step, layer, map);
      if (region == &branch.getElseRegion())
        condition = arith::XOrIOp::create(
            b, loc, condition, arith::ConstantIntOp::create(b, loc, 1, 1));
      both(condition);
    } else if (auto cases = dyn_cast<scf::IndexSwitchOp>(parent)) {
      Value argument = materializeUniform(b, cases.getArg(), step, layer, map);
      bool isDefault = region == &cases.getDefaultRegion();
      for (auto [value, caseRegion] :
           llvm::zip(cases.getCases(), cases.getCaseRegions())) {
        if (!isDefault && &caseRegion != region)
          continue;
        both(arith::CmpIOp::create(
            b, loc,
            isDefault ? arith::CmpIPredicate::ne : arith::CmpIPredicate::eq,
            argument, arith::ConstantIndexOp::create(b, loc, value)));
      }
    }
  }
  return reached;
}

/// What every product's MMAs share: the warp's place in the chunk of batch
/// rows, and the lane's in PTX's fragments.
struct ProductLanes {
  Value warpColumn; // the warp's first batch row in the chunk
  Value group;      // lane / 4: a fragment's row (A) or column (B)
  Value kGroup;     // lane % 4: which 4 k of each 16 the lane holds
  Value batchRow;   // the batch row whose activations the lane loads
};

/// The block's sums of `product` for the chunk of batch rows `lanes` are in,
/// on tensor cores, stored at `sums[position][batch row in the chunk][slot
/// row]`. Warp w computes batch rows 8w..8w+7 of the chunk for all 4U slot
/// rows: the slot rows are the MMAs' m (16 per tile), the batch rows their
/// n. Each trip of the k loop takes 16 k: each lane loads 4 consecutive k
/// (4 kGroup + [0, 4)) of its two A rows from the slot and of its batch row
/// from the activation, rounded to the operand type. The k within those 16
/// are permuted alike in both operands, which the sums do not see: PTX's
/// logical k kGroup, kGroup + 4 of a tf32 MMA (its registers 2r, 2r + 1)
/// are the lane's elements 2s, 2s + 1 in MMA s; a bf16 MMA's k pairs 2
/// kGroup + [0, 2) and 2 kGroup + 8 + [0, 2) its elements [0, 2), [2, 4).
void emitProduct(OpBuilder &b, Location loc, const Product &product,
                 linalg::GenericOp step, const UnitStep &info, const Slot &slot,
                 Value slotBuffer, Value sums, Value layer,
                 const ProductLanes &lanes) {
  IndexMath e{b, loc};
  IRMapping map;
  Value reached = reachedCondition(b, loc, product.loop, step, layer, map);
  auto inProduct = scf::IfOp::create(b, loc, reached, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inProduct.thenBlock());

  Type operandType = slot.operandType;
  bool tf32 = operandType.isF32();
  int64_t pack = 32 / operandType.getIntOrFloatBitWidth();
  int64_t mmaK = tf32 ? 8 : 16;
  int64_t mmaTiles = 4 * slot.units / 16;
  auto accumulatorType = VectorType::get({2, 2}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accumulatorType, 0.0f));

  // The activation's indices but k, at the lane's batch row.
  memref::LoadOp activation = product.activation;
  SmallVector<Value> indices;
  for (Value index : activation.getIndices().drop_back()) {
    indices.push_back(isBatchRow(index, step, info)
                          ? lanes.batchRow
                          : materializeUniform(b, index, step, layer, map));
  }
  Value activationBuffer =
      materializeUniform(b, activation.getMemRef(), step, layer, map);
  bool vectorLoads =
      mlir::recur::gemm::canLoadRowVectors(activationBuffer, kLaneElements);
  const StationaryWeight &weight = slot.weights[product.weight];
  auto laneVector = VectorType::get({kLaneElements}, operandType);

  auto kLoop = scf::ForOp::create(
      b, loc, e.index(0), e.index(product.depth), e.index(kProductDepthTile),
      SmallVector<Value>(mmaTiles, zeros),
      [&](OpBuilder &nb, Location loc, Value kTile, ValueRange accumulators) {
        IndexMath n{nb, loc};
        Value k = n.add(kTile, n.mul(lanes.kGroup, n.index(kLaneElements)));
        SmallVector<Value> at(indices);
        at.push_back(k);
        Value loaded;
        auto f32Vector = VectorType::get({kLaneElements}, nb.getF32Type());
        if (vectorLoads) {
          loaded = vector::LoadOp::create(nb, loc, f32Vector, activationBuffer,
                                          at, /*nontemporal=*/false,
                                          llvm::MaybeAlign(16));
        } else {
          SmallVector<Value> elements;
          for (int64_t i = 0; i < kLaneElements; ++i) {
            at.back() = n.add(k, n.index(i));
            elements.push_back(
                memref::LoadOp::create(nb, loc, activationBuffer, at));
          }
          loaded = vector::FromElementsOp::create(nb, loc, f32Vector, elements);
        }
        Value activations =
            mlir::recur::gemm::roundToOperandType(nb, loc, loaded, operandType);
        Value column = n.add(k, n.index(weight.slotColumn));
        auto weightRows = [&](int64_t row) -> Value {
          return vector::LoadOp::create(
              nb, loc, laneVector, slotBuffer,
              ValueRange{n.add(lanes.group, n.index(row)), column},
              /*nontemporal=*/false,
              llvm::MaybeAlign(kLaneElements *
                               operandType.getIntOrFloatBitWidth() / 8));
        };
        // Registers of `pack` elements, elements `first` + [0, pack) of
        // each source.
        auto fragment = [&](ArrayRef<std::pair<Value, int64_t>> registers) {
          auto type = VectorType::get(
              {static_cast<int64_t>(registers.size()), pack}, operandType);
          Value result = arith::ConstantOp::create(
              nb, loc,
              DenseElementsAttr::get(type, nb.getZeroAttr(operandType)));
          for (auto [r, source] : llvm::enumerate(registers)) {
            SmallVector<Value> elements;
            for (int64_t i = 0; i < pack; ++i)
              elements.push_back(vector::ExtractOp::create(
                  nb, loc, source.first, source.second + i));
            Value piece = vector::FromElementsOp::create(
                nb, loc, VectorType::get({pack}, operandType), elements);
            result = vector::InsertOp::create(nb, loc, piece, result,
                                              static_cast<int64_t>(r));
          }
          return result;
        };
        SmallVector<Value> updated(accumulators);
        for (int64_t tile = 0; tile < mmaTiles; ++tile) {
          Value upper = weightRows(16 * tile),
                lower = weightRows(16 * tile + 8);
          for (int64_t first = 0; first < kLaneElements; first += 2 * pack) {
            Value a = fragment({{upper, first},
                                {lower, first},
                                {upper, first + pack},
                                {lower, first + pack}});
            Value bFragment =
                fragment({{activations, first}, {activations, first + pack}});
            updated[tile] =
                nvgpu::MmaSyncOp::create(nb, loc, a, bFragment, updated[tile],
                                         ArrayRef<int64_t>{16, 8, mmaK}, tf32);
          }
        }
        scf::YieldOp::create(nb, loc, updated);
      });

  // Accumulator (i, j) of tile t: slot row 16 t + group + 8 i, batch row
  // warpColumn + 2 kGroup + j of the chunk.
  Value position = e.index(product.position);
  Value firstColumn = e.add(lanes.warpColumn, e.mul(lanes.kGroup, e.index(2)));
  for (int64_t tile = 0; tile < mmaTiles; ++tile)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        Value sum = vector::ExtractOp::create(b, loc, kLoop.getResult(tile),
                                              ArrayRef<int64_t>{i, j});
        memref::StoreOp::create(
            b, loc, sum, sums,
            ValueRange{position, e.add(firstColumn, e.index(j)),
                       e.add(lanes.group, e.index(16 * tile + 8 * i))});
      }
}

/// Replaces `step` by the schedule of scheduleByUnitGroups with its
/// products on tensor cores. The block takes its batch rows by chunks of 8
/// per warp: it computes the chunk's products into `sums` (emitProduct),
/// waits at a barrier, runs the chunk's (unit, batch row) iterations, a
/// thread each, with each product's loop replaced by its initial values
/// plus the sums, and waits at a second barrier before the next chunk's
/// products overwrite them.
void scheduleOnTensorCores(RewriterBase &rewriter, linalg::GenericOp step,
                           const UnitStep &info, const Slot &slot,
                           Value slotBuffer, Value sums,
                           ArrayRef<Product> products, int64_t threads) {
  Location loc = step.getLoc();
  GroupLoops loops =
      createGroupLoops(rewriter, step, info, slot, slotBuffer, threads);
  IndexMath e{rewriter, loc};
  int64_t chunkRows = kWarpBatchRows * (threads / 32);
  Value warp = e.div(loops.thread, e.index(32));
  Value lane = e.rem(loops.thread, e.index(32));
  ProductLanes lanes;
  lanes.warpColumn = e.mul(warp, e.index(kWarpBatchRows));
  lanes.group = e.div(lane, e.index(4));
  lanes.kGroup = e.rem(lane, e.index(4));
  Value lastRow = e.sub(loops.batch, e.index(1));
  Value chunks =
      e.div(e.add(loops.batch, e.index(chunkRows - 1)), e.index(chunkRows));
  auto chunkLoop =
      scf::ForOp::create(rewriter, loc, e.index(0), chunks, e.index(1));
  rewriter.setInsertionPointToStart(chunkLoop.getBody());
  Value chunkStart = e.mul(chunkLoop.getInductionVar(), e.index(chunkRows));
  // Rows past the batch load the last row's activations; their sums are
  // never read.
  lanes.batchRow = arith::MinUIOp::create(
      rewriter, loc, e.add(chunkStart, e.add(lanes.warpColumn, lanes.group)),
      lastRow);
  for (const Product &product : products)
    emitProduct(rewriter, loc, product, step, info, slot, slotBuffer, sums,
                loops.layer, lanes);
  gpu::BarrierOp::create(rewriter, loc);

  auto elements =
      scf::ForOp::create(rewriter, loc, loops.thread,
                         e.index(slot.units * chunkRows), e.index(threads));
  gpu::BarrierOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(elements.getBody());
  Value element = elements.getInductionVar();
  Value chunkRow = e.rem(element, e.index(chunkRows));
  Value batchRow = e.add(chunkStart, chunkRow);
  Value inBatch = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, batchRow, loops.batch);
  auto iteration = scf::IfOp::create(rewriter, loc, inBatch, false);
  rewriter.setInsertionPointToStart(iteration.thenBlock());
  SmallVector<Value> ivs(step.getNumLoops());
  ivs[info.batchDim] = batchRow;
  ivs[info.unitDim] =
      e.add(loops.firstUnit, e.div(element, e.index(chunkRows)));
  if (info.layerDim)
    ivs[*info.layerDim] = loops.layer;
  Value always = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
  IRMapping map = cloneIteration(rewriter, step, ivs, always);
  for (const Product &product : products) {
    auto loop = cast<scf::ForOp>(map.lookup(product.loop));
    rewriter.setInsertionPoint(loop);
    IndexMath n{rewriter, loop.getLoc()};
    const StationaryWeight &weight = slot.weights[product.weight];
    for (auto [load, init, result] : llvm::zip_equal(
             product.weightLoads, loop.getInitArgs(), loop.getResults())) {
      Value row = map.lookup(memref::LoadOp(load).getIndices()[0]);
      Value slotRow = slotRowOf(n, info, slot, weight, row, loops.firstUnit);
      Value sum = memref::LoadOp::create(
          rewriter, loop.getLoc(), sums,
          ValueRange{n.index(product.position), chunkRow, slotRow});
      rewriter.replaceAllUsesWith(
          result, arith::AddFOp::create(rewriter, loop.getLoc(), init, sum));
    }
    rewriter.eraseOp(loop);
  }
  rewriter.eraseOp(step);
}

/// Why `step` cannot be scheduled by unit groups, or "" if it can: it needs
/// buffers, one iteration per output element (projected permutation maps),
/// a body that writes no memory (a thread may repeat an iteration) and has
/// linalg.index only in its own block, the unit dimension of extent H.
std::string whyNotByUnitGroups(linalg::GenericOp step, const UnitStep &info) {
  if (!step.hasPureBufferSemantics())
    return "it is not on buffers";
  if (step.getNumReductionLoops() != 0)
    return "it has reduction loops";
  for (AffineMap map : step.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return "an operand's indexing is not a projected permutation";
  SmallVector<int64_t> ranges = step.getStaticLoopRanges();
  if (ranges[info.unitDim] != info.hidden ||
      (info.layerDim && ranges[*info.layerDim] != info.layers()))
    return "its unit (or layer) loop does not span every unit (or layer)";
  std::string whyNot;
  step.getRegion().walk([&](Operation *op) {
    if (isa<linalg::IndexOp>(op) && op->getBlock() != step.getBody())
      whyNot = "it reads a loop index inside a nested region";
    else if (hasEffect<MemoryEffects::Write>(op))
      whyNot = "its body writes memory";
    return whyNot.empty() ? WalkResult::advance() : WalkResult::interrupt();
  });
  return whyNot;
}

/// A step, scheduled.
struct Plan {
  linalg::GenericOp step;
  UnitStep info;
  Slot slot;
  SmallVector<Product> products; // empty: SIMT
};

struct GpuStationaryWeightsPass
    : mlir::recur::impl::GpuStationaryWeightsBase<GpuStationaryWeightsPass> {
  using Base::Base;

  /// The step's plan on tensor cores, if its products all qualify and a
  /// group of a multiple of 4 units (16 slot rows: an MMA's m) fits;
  /// otherwise says why in `whyNot`.
  std::optional<Plan> planOnTensorCores(linalg::GenericOp step,
                                        const UnitStep &info, Slot slot,
                                        Type operandType, std::string &whyNot) {
    if (!slot.elementType.isF32()) {
      whyNot = "its weights are not f32";
      return std::nullopt;
    }
    if (blockSize % 32 != 0) {
      whyNot = "the block size is not a multiple of a warp";
      return std::nullopt;
    }
    FailureOr<SmallVector<Product>> products =
        matchProducts(step, info, slot, whyNot);
    if (failed(products))
      return std::nullopt;
    for (const Product &product : *products)
      slot.productsPerLayer =
          std::max(slot.productsPerLayer, product.position + 1);
    slot.elementType = slot.operandType = operandType;
    slot.units = unitsPerBlock(info, slot, maxUnits, sharedMemoryBytes,
                               /*unitMultiple=*/4, [&](int64_t units) {
                                 Slot sized = slot;
                                 sized.units = units;
                                 MemRefType type =
                                     sumsType(&getContext(), sized, blockSize);
                                 return type.getNumElements() * 4;
                               });
    if (slot.units == 0) {
      whyNot = "no group of a multiple of 4 units fits in shared memory";
      return std::nullopt;
    }
    return Plan{step, info, slot, std::move(*products)};
  }

  void runOnOperation() override {
    Type operandType =
        mlir::recur::gemm::mmaOperandType(&getContext(), precision);
    std::vector<Plan> plans;
    getOperation()->walk([&](linalg::GenericOp step) {
      auto attr =
          step->getAttrOfType<UnitStepAttr>(RecurDialect::kUnitStepAttrName);
      if (!attr)
        return;
      // Mapped like any loop nest instead.
      auto plainLoopNest = [&](const Twine &reason) {
        remarkMissed(step, getArgument(),
                     "the fused step runs as a plain loop nest, its weights "
                     "read from L2 at every step",
                     reason);
      };
      if (!llvm::all_equal(attr.getHidden()))
        return plainLoopNest("its layers have different hidden sizes");
      UnitStep info = readUnitStep(attr);
      if (std::string whyNot = whyNotByUnitGroups(step, info); !whyNot.empty())
        return plainLoopNest(whyNot);
      std::string whyNot;
      FailureOr<Slot> slot = findWeights(step, info, whyNot);
      if (failed(slot))
        return plainLoopNest(whyNot);
      if (operandType) {
        if (std::optional<Plan> plan =
                planOnTensorCores(step, info, *slot, operandType, whyNot)) {
          plans.push_back(std::move(*plan));
          return;
        }
        remarkMissed(step, getArgument(),
                     "the fused step's products run as SIMT FMAs instead of "
                     "on tensor cores",
                     whyNot);
      }
      slot->units =
          unitsPerBlock(info, *slot, maxUnits, sharedMemoryBytes,
                        /*unitMultiple=*/1, [](int64_t) { return 0; });
      if (slot->units == 0)
        return plainLoopNest(
            "one unit's gate rows of every weight (" +
            Twine(4 * slot->stride() *
                  slot->elementType.getIntOrFloatBitWidth() / 8) +
            " bytes) do not fit in " + Twine(sharedMemoryBytes) +
            " bytes of shared memory");
      plans.push_back(Plan{step, info, *slot, {}});
    });
    IRRewriter rewriter(&getContext());
    // Steps that read the same weights in the same way (the two steps of a
    // double-buffered time loop) share a slot (and buffer of sums), so that
    // their kernel's shared memory holds them once.
    struct SharedBuffers {
      Slot slot;
      Value slotBuffer, sums;
    };
    SmallVector<SharedBuffers> shared;
    for (Plan &plan : plans) {
      Slot &slot = plan.slot;
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE << ": " << plan.step.getLoc() << ": groups of "
                 << slot.units << " units, a slot of " << 4 * slot.units
                 << " x " << slot.stride() << " " << slot.elementType << ", "
                 << (plan.products.empty()
                         ? std::string("SIMT FMAs")
                         : std::to_string(plan.products.size()) +
                               " products on tensor cores")
                 << "\n");
      auto found = llvm::find_if(
          shared, [&](const auto &entry) { return entry.slot == slot; });
      if (found == shared.end()) {
        // Shared-memory buffers at the function's entry, made workgroup
        // attributions of the kernel that uses them by
        // recur-gpu-workgroup-attributions.
        rewriter.setInsertionPointToStart(
            &getOperation().getFunctionBody().front());
        Location loc = plan.step.getLoc();
        auto type = MemRefType::get(
            {4 * slot.units, slot.stride()}, slot.elementType, AffineMap(),
            gpu::AddressSpaceAttr::get(&getContext(),
                                       gpu::AddressSpace::Workgroup));
        SharedBuffers buffers{
            slot, memref::AllocOp::create(rewriter, loc, type), nullptr};
        if (slot.operandType)
          buffers.sums = memref::AllocOp::create(
              rewriter, loc, sumsType(&getContext(), slot, blockSize));
        shared.push_back(buffers);
        found = std::prev(shared.end());
      }
      if (plan.products.empty())
        scheduleByUnitGroups(rewriter, plan.step, plan.info, slot,
                             found->slotBuffer, blockSize, maxLanes);
      else
        scheduleOnTensorCores(rewriter, plan.step, plan.info, slot,
                              found->slotBuffer, found->sums, plan.products,
                              blockSize);
    }
  }
};

} // namespace
