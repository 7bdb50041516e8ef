//===- StationaryWeightsSimt.cpp - a group of units on SIMT FMAs ----------===//
//
// A block stages its group's weight rows in shared memory, then runs the
// group's iterations, batch row fastest, reading the weights from there.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"
#include "StationaryWeights.h"
#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"

using namespace mlir;
using namespace mlir::recur;

namespace mlir::recur::stationary {

Value firstGateRow(IndexMath &e, const UnitStep &info, int64_t layer,
                   Value unit) {
  int64_t tile = info.gateTiles[layer];
  if (!tile)
    return unit;
  return e.add(unit, e.mul(e.div(unit, e.index(tile)),
                           e.index((info.gates - 1) * tile)));
}

void emitLoadLayer(IndexMath &e, const UnitStep &info, const Slot &slot,
                   Value slotBuffer, int64_t layer, Value firstUnit,
                   Value thread, int64_t threads) {
  Value first = firstGateRow(e, info, layer, firstUnit);
  for (const StationaryWeight &weight : slot.weights) {
    if (weight.layer != layer)
      continue;
    int64_t columns = cast<MemRefType>(weight.buffer.getType()).getDimSize(1);
    scf::ForOp::create(
        e.b, e.loc, thread, e.index(slot.rows() * columns), e.index(threads),
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
        // On tensor cores the rows past the group's fill out the last MMA
        // tile: zeros, so that its MMAs read only defined values (their
        // sums are never read).
        if (int64_t padding = slot.allocatedRows() - slot.rows()) {
          int64_t stride = slot.stride();
          Value zero = arith::ConstantOp::create(
              nb, loc, nb.getZeroAttr(slot.elementType));
          scf::ForOp::create(
              nb, loc, thread, n.index(padding * stride), n.index(threads),
              ValueRange(),
              [&](OpBuilder &lb, Location loc, Value element, ValueRange) {
                IndexMath l{lb, loc};
                Value row = l.add(l.index(slot.rows()),
                                  l.div(element, l.index(stride)));
                memref::StoreOp::create(
                    lb, loc, zero, slotBuffer,
                    ValueRange{row, l.rem(element, l.index(stride))});
                scf::YieldOp::create(lb, loc);
              });
        }
        gpu::BarrierOp::create(nb, loc);
        scf::YieldOp::create(nb, loc);
      });
  stage->setAttr(recur::kStageWeightsAttrName, e.b.getUnitAttr());
}

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

Value slotRowOf(IndexMath &e, const UnitStep &info, const Slot &slot,
                const StationaryWeight &weight, Value row, Value firstUnit) {
  Value offset = e.sub(row, firstGateRow(e, info, weight.layer, firstUnit));
  Value stride = e.index(info.gateStride(weight.layer));
  return e.add(e.mul(e.div(offset, stride), e.index(slot.units)),
               e.rem(offset, stride));
}

//===----------------------------------------------------------------------===//
// SIMT: each thread sums its iterations' products itself
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

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

} // namespace mlir::recur::stationary
