//===- PersistentKernels.cpp - one kernel per time loop, a grid barrier ---===//
//
// Mapped one by one, a time loop of parallel loops launches a kernel per
// parallel loop per step: hundreds of launches per forward, each ending in a
// round trip through the host's stream. Here the whole serial loop becomes
// one kernel whose blocks all run the loop, share out each parallel loop
// over the grid, and meet at a grid-wide barrier after it: the GPU form of
// recur-persistent-parallel-loops (workers are blocks, not threads).
//
//===----------------------------------------------------------------------===//

#include "../PersistentLoops.h"
#include "recur/Codegen/Passes.h"
#include "recur/Utils/Remarks.h"
#include "recur/runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUPERSISTENTKERNELS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// The runtime launches kernels whose name starts with this cooperatively,
/// with at most as many blocks as fit on the device at once.
constexpr StringLiteral kPersistentKernelPrefix =
    RECUR_PERSISTENT_KERNEL_PREFIX;

/// The barrier's two counters sit on separate 128-byte lines: blocks
/// arriving do not contend with blocks polling.
constexpr int64_t kArrivedIndex = 0, kGenerationIndex = 32, kBarrierWords = 64;

/// The most bytes of parameters a kernel may take (PTX before ISA 8.1,
/// which the pipelines' +ptx80 is, refuses more than 4352), less room for
/// the barrier's counters and the launch's own.
constexpr int64_t kMaxKernelParameterBytes = 4096;

/// The bytes of parameters the kernel of `loop` would take, outlined: each
/// value defined before the loop that the loop reads, a memref as its
/// descriptor (two pointers, the offset, sizes and strides: 8 bytes each),
/// anything else 8 bytes; constants are cloned into the kernel instead.
int64_t parameterBytes(scf::ForOp loop) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop.getRegion(), captured);
  captured.insert(loop->operand_begin(), loop->operand_end());
  int64_t bytes = 0;
  for (Value value : captured) {
    if (matchPattern(value, m_Constant()))
      continue;
    auto memref = dyn_cast<MemRefType>(value.getType());
    bytes += 8 * (memref ? 3 + 2 * memref.getRank() : 1);
  }
  return bytes;
}

/// The parallel loop inside `outer` when `outer` is one tile loop of a
/// parallel loop tiled for `blockSize` threads: a 1-D loop whose body
/// computes values, then runs a 1-D loop from 0 to `blockSize` by 1 (one
/// iteration per thread) with no parallel loop inside. Null otherwise.
scf::ParallelOp threadLoop(scf::ParallelOp outer, int64_t blockSize) {
  if (outer.getNumLoops() != 1 || outer.getNumResults() != 0)
    return nullptr;
  Block *body = outer.getBody();
  auto inner = dyn_cast<scf::ParallelOp>(body->getTerminator()->getPrevNode());
  APInt extent;
  if (!inner || inner.getNumLoops() != 1 || inner.getNumResults() != 0 ||
      !matchPattern(inner.getLowerBound()[0], m_Zero()) ||
      !matchPattern(inner.getStep()[0], m_One()) ||
      !matchPattern(inner.getUpperBound()[0], m_ConstantInt(&extent)) ||
      extent != blockSize)
    return nullptr;
  // Ops before the thread loop run once per tile; they will run once per
  // thread.
  for (Operation &op : body->without_terminator())
    if (&op != inner && (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)))
      return nullptr;
  bool nestedParallel =
      inner.getBody()
          ->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  return nestedParallel ? nullptr : inner;
}

/// What the code inside the persistent kernel refers to.
struct Kernel {
  Value blockId, threadId, gridSize; // index, x dimension
  Value blocks;                      // i32: the grid size
  Value arrived, generation;         // !llvm.ptr to the barrier's counters
};

/// Replaces tiled parallel loop `outer` by a grid-stride loop over its tiles:
/// block b takes tiles b, b + grid, ...; thread t runs iteration t of each.
scf::ForOp distributeOverGrid(RewriterBase &rewriter, scf::ParallelOp outer,
                              scf::ParallelOp inner, const Kernel &kernel) {
  Location loc = outer.getLoc();
  rewriter.setInsertionPoint(outer);
  Value step = outer.getStep()[0];
  Value start = arith::AddIOp::create(
      rewriter, loc, outer.getLowerBound()[0],
      arith::MulIOp::create(rewriter, loc, kernel.blockId, step));
  Value stride = arith::MulIOp::create(rewriter, loc, step, kernel.gridSize);
  auto loop = scf::ForOp::create(rewriter, loc, start, outer.getUpperBound()[0],
                                 stride);
  rewriter.eraseOp(inner.getBody()->getTerminator());
  rewriter.inlineBlockBefore(inner.getBody(), inner, {kernel.threadId});
  rewriter.eraseOp(inner);
  rewriter.eraseOp(outer.getBody()->getTerminator());
  rewriter.inlineBlockBefore(outer.getBody(), loop.getBody()->getTerminator(),
                             {loop.getInductionVar()});
  rewriter.eraseOp(outer);
  return loop;
}

/// A barrier across the whole grid, at the current insertion point: the
/// block's threads meet; its first thread arrives at the device-wide counter
/// and, unless it is the last to arrive, waits for the generation to change;
/// the last resets the counter and starts the next generation. Release and
/// acquire at device scope (with fences, as CUDA's grid.sync) make every
/// block's writes before the barrier visible to every block after it. The
/// generation is compared for equality only, so it may wrap.
void emitGridBarrier(OpBuilder &b, Location loc, const Kernel &kernel) {
  constexpr StringLiteral device = "device";
  using LLVM::AtomicOrdering;
  Type i32 = b.getI32Type();
  gpu::BarrierOp::create(b, loc);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      kernel.threadId, zero);
  scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
    Value generation = LLVM::LoadOp::create(
        b, loc, i32, kernel.generation, /*alignment=*/4, false, false, false,
        false, AtomicOrdering::acquire, device);
    LLVM::FenceOp::create(b, loc, AtomicOrdering::acq_rel, device);
    Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
    Value arrivedBefore = LLVM::AtomicRMWOp::create(
        b, loc, LLVM::AtomicBinOp::add, kernel.arrived, one,
        AtomicOrdering::acq_rel, device);
    Value lastCount = arith::SubIOp::create(b, loc, kernel.blocks, one);
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       arrivedBefore, lastCount);
    scf::IfOp::create(
        b, loc, last,
        [&](OpBuilder &b, Location loc) {
          // Orders what the other blocks released (read through the
          // counter) before the release below: NVPTX emits the atomics'
          // orderings as relaxed operations plus fences, and only fences
          // make the chain explicit.
          LLVM::FenceOp::create(b, loc, AtomicOrdering::acq_rel, device);
          Value zero32 = arith::ConstantIntOp::create(b, loc, i32, 0);
          LLVM::StoreOp::create(b, loc, zero32, kernel.arrived, 4, false, false,
                                false, AtomicOrdering::monotonic, device);
          LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add,
                                    kernel.generation, one,
                                    AtomicOrdering::release, device);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location loc) {
          scf::WhileOp::create(
              b, loc, TypeRange(), ValueRange(),
              [&](OpBuilder &b, Location loc, ValueRange) {
                Value now = LLVM::LoadOp::create(
                    b, loc, i32, kernel.generation, 4, false, false, false,
                    false, AtomicOrdering::acquire, device);
                Value same = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::eq, now, generation);
                scf::ConditionOp::create(b, loc, same, ValueRange());
              },
              [&](OpBuilder &b, Location loc, ValueRange) {
                scf::YieldOp::create(b, loc);
              });
          scf::YieldOp::create(b, loc);
        });
    LLVM::FenceOp::create(b, loc, AtomicOrdering::acq_rel, device);
    scf::YieldOp::create(b, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

/// Where a block's tiles of `outer` stage their weights in shared memory
/// (recur-gpu-stationary-weights' marked scf.if in `inner`, the thread
/// loop), and every block owns at most one tile (`tiles` is the tile count,
/// defined before the kernel): stages the block's tile once, at the
/// insertion point (before the time loop), and the marked stage runs only
/// when blocks own several tiles. The weights then stay in shared memory
/// for all steps whenever the grid covers every tile.
void hoistWeightStage(RewriterBase &rewriter, scf::ParallelOp outer,
                      scf::ParallelOp inner, Value tiles,
                      const Kernel &kernel) {
  auto stage = llvm::find_if(inner.getBody()->getOperations(), [](auto &op) {
    return op.hasAttr(recur::kStageWeightsAttrName);
  });
  if (stage == inner.getBody()->end() || !tiles)
    return;
  auto stageIf = cast<scf::IfOp>(*stage);
  Location loc = stageIf.getLoc();
  Value once = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge,
                                     kernel.gridSize, tiles);
  Value owns = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                     kernel.blockId, tiles);
  Value stageNow = arith::AndIOp::create(rewriter, loc, once, owns);
  scf::IfOp::create(rewriter, loc, stageNow, [&](OpBuilder &b, Location loc) {
    // The tile's values (computed from the tile index only), then the
    // stage, as thread `threadId` of the tile that is block `blockId`.
    IRMapping map;
    Value step = outer.getStep()[0];
    map.map(outer.getInductionVars()[0],
            arith::AddIOp::create(
                b, loc, outer.getLowerBound()[0],
                arith::MulIOp::create(b, loc, kernel.blockId, step)));
    map.map(inner.getInductionVars()[0], kernel.threadId);
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != inner)
        b.clone(op, map);
    for (Operation &op : stageIf.thenBlock()->without_terminator())
      b.clone(op, map);
    scf::YieldOp::create(b, loc);
  });
  Value always = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
  Value several = arith::XOrIOp::create(rewriter, loc, once, always);
  rewriter.modifyOpInPlace(
      stageIf, [&] { stageIf.getConditionMutable().assign(several); });
}

/// The number of tiles of `loop` as a host value, if its bounds are defined
/// outside `timeLoop`.
Value tileCount(OpBuilder &b, scf::ParallelOp loop, scf::ForOp timeLoop) {
  Value lower = loop.getLowerBound()[0], upper = loop.getUpperBound()[0],
        step = loop.getStep()[0];
  for (Value bound : {lower, upper, step})
    if (timeLoop->isAncestor(bound.getParentBlock()->getParentOp()))
      return nullptr;
  Location loc = loop.getLoc();
  Value extent = arith::SubIOp::create(b, loc, upper, lower);
  return arith::CeilDivSIOp::create(b, loc, extent, step);
}

/// Replaces `timeLoop` by a launch of the persistent kernel `kernelName`
/// (blocks of `blockSize` threads) that runs it.
void buildPersistentKernel(RewriterBase &rewriter, scf::ForOp timeLoop,
                           int64_t blockSize, StringRef kernelName) {
  Location loc = timeLoop.getLoc();
  struct SharedOutLoop {
    scf::ParallelOp outer, inner;
    Value tiles; // null if not known before the time loop
  };
  SmallVector<SharedOutLoop> loops;
  for (scf::ParallelOp outer : mlir::recur::outermostParallelLoops(timeLoop))
    loops.push_back({outer, threadLoop(outer, blockSize), nullptr});

  // One block per tile of the largest parallel loop whose size is known
  // before the loop; the runtime caps it at what fits on the device at once
  // (a grid-stride loop serves any grid).
  rewriter.setInsertionPoint(timeLoop);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value grid = one;
  for (SharedOutLoop &loop : loops)
    if ((loop.tiles = tileCount(rewriter, loop.outer, timeLoop)))
      grid = arith::MaxSIOp::create(rewriter, loc, grid, loop.tiles);

  auto barrierType = MemRefType::get({kBarrierWords}, rewriter.getI32Type());
  Value counters = memref::AllocOp::create(rewriter, loc, barrierType);
  gpu::MemsetOp::create(
      rewriter, loc, /*asyncToken=*/Type(), ValueRange(), counters,
      arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 0));
  Value threads = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, grid, one, one, threads, one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, /*workgroupAttributions=*/{},
      /*privateAttributions=*/{}, nullptr, nullptr, nullptr,
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName),
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName));
  rewriter.setInsertionPointAfter(launch);
  memref::DeallocOp::create(rewriter, loc, counters);

  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  Kernel kernel;
  kernel.blockId = launch.getBlockIds().x;
  kernel.threadId = launch.getThreadIds().x;
  kernel.gridSize = launch.getGridSize().x;
  kernel.blocks = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getI32Type(), kernel.gridSize);
  Type i64 = rewriter.getI64Type();
  Value address = arith::IndexCastOp::create(
      rewriter, loc, i64,
      memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, counters));
  auto pointerType = LLVM::LLVMPointerType::get(rewriter.getContext());
  Value base = LLVM::IntToPtrOp::create(rewriter, loc, pointerType, address);
  auto counterAt = [&](int64_t index) -> Value {
    return LLVM::GEPOp::create(rewriter, loc, pointerType,
                               rewriter.getI32Type(), base,
                               ArrayRef<LLVM::GEPArg>{index});
  };
  kernel.arrived = counterAt(kArrivedIndex);
  kernel.generation = counterAt(kGenerationIndex);
  rewriter.moveOpBefore(timeLoop, terminator);

  for (auto [outer, inner, tiles] : loops) {
    rewriter.setInsertionPoint(timeLoop);
    hoistWeightStage(rewriter, outer, inner, tiles, kernel);
    scf::ForOp gridLoop = distributeOverGrid(rewriter, outer, inner, kernel);
    rewriter.setInsertionPointAfter(gridLoop);
    emitGridBarrier(rewriter, loc, kernel);
  }
}

struct GpuPersistentKernelsPass
    : mlir::recur::impl::GpuPersistentKernelsBase<GpuPersistentKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Tiling leaves the thread loops' extents as products of constants.
    // Folding them (without canonicalization patterns, which would merge
    // the tile and thread loops that gpu-map-parallel-loops maps apart)
    // lets the thread loops be recognised.
    (void)applyPatternsGreedily(func, FrozenRewritePatternSet());
    auto canShareOut = [&](scf::ParallelOp loop) {
      return threadLoop(loop, blockSize) != nullptr;
    };
    auto isKernel = [](Operation *op) { return isa<gpu::LaunchOp>(op); };
    IRRewriter rewriter(&getContext());
    int index = 0;
    for (scf::ForOp loop : mlir::recur::findPersistentLoops(
             func, canShareOut, isKernel, [&](scf::ForOp loop, StringRef why) {
               mlir::recur::remarkMissed(
                   loop, getArgument(),
                   "this time loop launches a kernel per parallel "
                   "loop at every step, not one persistent kernel",
                   why);
             })) {
      // Bounds computed in the loop from values defined before it move out,
      // so that the grid can be sized from them.
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
      // A step of many buffers (a traced cell's temporaries) would pass
      // more parameters than PTX takes: its loops launch per step instead.
      if (int64_t bytes = parameterBytes(loop);
          bytes > kMaxKernelParameterBytes) {
        mlir::recur::remarkMissed(
            loop, getArgument(),
            "this time loop launches a kernel per parallel loop at every "
            "step, not one persistent kernel",
            "its kernel would take " + std::to_string(bytes) +
                " bytes of parameters (the buffers and sizes the loop "
                "reads), more than PTX's " +
                std::to_string(kMaxKernelParameterBytes));
        continue;
      }
      std::string name =
          (kPersistentKernelPrefix + func.getSymName() + "_" + Twine(index++))
              .str();
      buildPersistentKernel(rewriter, loop, blockSize, name);
    }
  }
};

} // namespace
