//===- EmulateLaunches.cpp - GPU kernels as OpenMP threads on the CPU -----===//
//
// The GPU path's kernels cannot run where there is no GPU, and a GPU is rare
// where Recur is developed and tested. Here each gpu.launch of the CUDA
// pipeline becomes host code that runs the same kernel body with real
// threads: a block is an OpenMP team with one thread per GPU thread,
// gpu.barrier an OpenMP barrier, workgroup memory a buffer the team shares,
// a gpu.shuffle an exchange through such a buffer between two barriers
// (so, like a barrier, it must be reached by every thread of the block).
// Blocks run one after another, except in a persistent kernel, whose blocks
// meet at a grid barrier and so must run at once: there, each block's team
// is nested in an outer team with a thread per block. The kernels'
// indexing, barriers, shared memory and grid barrier then meet the CPU
// numerics suite.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"
#include "recur/runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUEMULATELAUNCHES
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

constexpr StringLiteral kThreadNumFunction = "omp_get_thread_num";
constexpr StringLiteral kYieldFunction = "sched_yield";
constexpr StringLiteral kMaxActiveLevelsFunction = "omp_set_max_active_levels";

/// Calls the C function `name` of type `type`, declared in `module` (as an
/// LLVM function: a func.func would get a C-interface wrapper).
LLVM::CallOp callFunction(OpBuilder &b, Location loc, ModuleOp module,
                          StringRef name, LLVM::LLVMFunctionType type,
                          ValueRange arguments) {
  auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!function) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    function = LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
  }
  return LLVM::CallOp::create(b, loc, function, arguments);
}

/// Calls the C function `name` of type int(void).
Value callIntFunction(OpBuilder &b, Location loc, ModuleOp module,
                      StringRef name) {
  auto type = LLVM::LLVMFunctionType::get(b.getI32Type(), {});
  return callFunction(b, loc, module, name, type, ValueRange()).getResult();
}

/// A team of `threads` (index) threads opened at the insertion point, which
/// is left in it, and the team's thread number.
struct Team {
  omp::ParallelOp op;
  Value threadNumber;
};

Team openTeam(RewriterBase &rewriter, Location loc, ModuleOp module,
              Value threads) {
  omp::ParallelOperands clauses;
  clauses.numThreads =
      arith::IndexCastOp::create(rewriter, loc, rewriter.getI32Type(), threads);
  auto team = omp::ParallelOp::create(rewriter, loc, clauses);
  rewriter.createBlock(&team.getRegion());
  rewriter.setInsertionPoint(omp::TerminatorOp::create(rewriter, loc));
  Value number = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      callIntFunction(rewriter, loc, module, kThreadNumFunction));
  return {team, number};
}

/// `type` in the default memory space.
MemRefType hostType(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

struct Emulator {
  ModuleOp module;
  int64_t maxPersistentBlocks;

  LogicalResult emulate(RewriterBase &rewriter, gpu::LaunchOp launch);

private:
  /// The block's shared memory: the launch's workgroup buffers, and a
  /// buffer of a value per thread for each type its shuffles exchange.
  struct BlockMemory {
    SmallVector<Value> workgroupBuffers;
    DenseMap<Type, Value> shuffleBuffers;
  };
  BlockMemory allocateBlockMemory(RewriterBase &rewriter, gpu::LaunchOp launch);

  /// Moves the launch's body into a new team of a thread per GPU thread
  /// (one block) at the insertion point: block `blockIds` (x, y, z), thread
  /// the team's thread number.
  void runInTeam(RewriterBase &rewriter, gpu::LaunchOp launch,
                 ArrayRef<Value> blockIds, Value gridX,
                 const BlockMemory &memory);
};

/// Replaces `shuffle` (xor), run by thread `thread` of `blockSize`, by an
/// exchange through `buffer`: every thread writes its value, and after a
/// barrier reads its partner's (its own where the partner is outside the
/// width or the block); a second barrier keeps the buffer until all have
/// read.
void emulateShuffle(RewriterBase &rewriter, gpu::ShuffleOp shuffle,
                    Value thread, Value blockSize, Value buffer) {
  Location loc = shuffle.getLoc();
  rewriter.setInsertionPoint(shuffle);
  auto index = [&](Value value) -> Value {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getIndexType(),
                                        value);
  };
  Value warp = arith::ConstantIndexOp::create(rewriter, loc, 32);
  Value lane = arith::RemUIOp::create(rewriter, loc, thread, warp);
  Value partnerLane =
      arith::XOrIOp::create(rewriter, loc, lane, index(shuffle.getOffset()));
  Value partner = arith::AddIOp::create(
      rewriter, loc, arith::SubIOp::create(rewriter, loc, thread, lane),
      partnerLane);
  Value valid = arith::AndIOp::create(
      rewriter, loc,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                            partnerLane, index(shuffle.getWidth())),
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, partner,
                            blockSize));
  Value source = arith::SelectOp::create(rewriter, loc, valid, partner, thread);
  memref::StoreOp::create(rewriter, loc, shuffle.getValue(), buffer, thread);
  omp::BarrierOp::create(rewriter, loc);
  Value result = memref::LoadOp::create(rewriter, loc, buffer, source);
  omp::BarrierOp::create(rewriter, loc);
  rewriter.replaceOp(shuffle, {result, valid});
}

LogicalResult Emulator::emulate(RewriterBase &rewriter, gpu::LaunchOp launch) {
  Location loc = launch.getLoc();
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.hasClusterSize() || launch.getDynamicSharedMemorySize())
    return launch.emitError("cannot emulate an asynchronous, clustered or "
                            "dynamic shared memory launch");
  if (!matchPattern(launch.getBlockSizeY(), m_One()) ||
      !matchPattern(launch.getBlockSizeZ(), m_One()))
    return launch.emitError("cannot emulate blocks of more than one "
                            "dimension");
  if (!launch.getBody().hasOneBlock())
    return launch.emitError("cannot emulate a kernel body of several blocks");
  WalkResult shuffles = launch.walk([](gpu::ShuffleOp shuffle) {
    if (shuffle.getMode() == gpu::ShuffleMode::XOR)
      return WalkResult::advance();
    shuffle.emitError("cannot emulate a gpu.shuffle other than xor");
    return WalkResult::interrupt();
  });
  if (shuffles.wasInterrupted())
    return failure();
  bool persistent = launch.getFunction() && launch.getFunction()->starts_with(
                                                RECUR_PERSISTENT_KERNEL_PREFIX);

  rewriter.setInsertionPoint(launch);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value zero = index(0), one = index(1);
  if (persistent) {
    // Any grid computes the same result; the runtime launches at most what
    // is resident, the emulation a few blocks' worth of threads. The
    // blocks run at once: an outer team with a thread per block, each
    // running its block as a nested team, so that a block barrier waits
    // for the block's threads only.
    if (!matchPattern(launch.getGridSizeY(), m_One()) ||
        !matchPattern(launch.getGridSizeZ(), m_One()))
      return launch.emitError("cannot emulate a persistent kernel with a "
                              "multi-dimensional grid");
    Value grid = arith::MinUIOp::create(rewriter, loc, launch.getGridSizeX(),
                                        index(maxPersistentBlocks));
    Type i32 = rewriter.getI32Type();
    callFunction(
        rewriter, loc, module, kMaxActiveLevelsFunction,
        LLVM::LLVMFunctionType::get(
            LLVM::LLVMVoidType::get(rewriter.getContext()), {i32}),
        arith::ConstantIntOp::create(rewriter, loc, i32, 2).getResult());
    Value block = openTeam(rewriter, loc, module, grid).threadNumber;
    runInTeam(rewriter, launch, {block, zero, zero}, grid,
              allocateBlockMemory(rewriter, launch));
    rewriter.eraseOp(launch);
    return success();
  }

  // Block by block: z, y, x loops around a team for each.
  SmallVector<Value> blockIds(3);
  Value sizes[] = {launch.getGridSizeZ(), launch.getGridSizeY(),
                   launch.getGridSizeX()};
  for (int dim = 0; dim < 3; ++dim) {
    auto loop = scf::ForOp::create(rewriter, loc, zero, sizes[dim], one);
    blockIds[2 - dim] = loop.getInductionVar();
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  runInTeam(rewriter, launch, blockIds, launch.getGridSizeX(),
            allocateBlockMemory(rewriter, launch));
  rewriter.eraseOp(launch);
  return success();
}

Emulator::BlockMemory Emulator::allocateBlockMemory(RewriterBase &rewriter,
                                                    gpu::LaunchOp launch) {
  Location loc = launch.getLoc();
  BlockMemory memory;
  for (BlockArgument buffer : launch.getWorkgroupAttributions())
    memory.workgroupBuffers.push_back(memref::AllocaOp::create(
        rewriter, loc, hostType(cast<MemRefType>(buffer.getType()))));
  launch.walk([&](gpu::ShuffleOp shuffle) {
    Type type = shuffle.getValue().getType();
    if (!memory.shuffleBuffers.contains(type))
      memory.shuffleBuffers[type] = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get({ShapedType::kDynamic}, type),
          ValueRange{launch.getBlockSizeX()});
  });
  return memory;
}

void Emulator::runInTeam(RewriterBase &rewriter, gpu::LaunchOp launch,
                         ArrayRef<Value> blockIds, Value gridX,
                         const BlockMemory &memory) {
  Location loc = launch.getLoc();
  Team block = openTeam(rewriter, loc, module, launch.getBlockSizeX());
  omp::ParallelOp team = block.op;
  Value threadX = block.threadNumber;
  Operation *terminator = team.getRegion().front().getTerminator();
  Value blockSize = launch.getBlockSizeX();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);

  // The body's arguments: block ids, thread ids, grid and block sizes
  // (x, y, z each), then workgroup and private buffers.
  SmallVector<Value> arguments(blockIds);
  arguments.append({threadX, zero, zero});
  arguments.append({gridX, launch.getGridSizeY(), launch.getGridSizeZ()});
  arguments.append({blockSize, one, one});
  arguments.append(memory.workgroupBuffers.begin(),
                   memory.workgroupBuffers.end());
  for (BlockArgument buffer : launch.getPrivateAttributions())
    arguments.push_back(memref::AllocaOp::create(
        rewriter, loc, hostType(cast<MemRefType>(buffer.getType()))));

  Block &body = launch.getBody().front();
  // Retype first: the buffers lose their GPU memory space.
  for (auto [argument, value] : llvm::zip(body.getArguments(), arguments))
    argument.setType(value.getType());
  rewriter.eraseOp(body.getTerminator());
  rewriter.inlineBlockBefore(&body, terminator, arguments);

  team.walk([&](gpu::ShuffleOp shuffle) {
    emulateShuffle(rewriter, shuffle, threadX, blockSize,
                   memory.shuffleBuffers.at(shuffle.getValue().getType()));
  });
  team.walk([&](gpu::BarrierOp barrier) {
    rewriter.setInsertionPoint(barrier);
    rewriter.replaceOpWithNewOp<omp::BarrierOp>(barrier);
  });
  // A spin-wait (a loop polling an atomic load: the grid barrier) yields the
  // core at each poll, since the team has many more threads than the CPU
  // has cores.
  team.walk([&](scf::WhileOp loop) {
    bool polls =
        loop.getBefore()
            .walk([](LLVM::LoadOp load) {
              return load.getOrdering() != LLVM::AtomicOrdering::not_atomic
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted();
    if (!polls)
      return;
    rewriter.setInsertionPoint(loop.getAfter().front().getTerminator());
    callIntFunction(rewriter, loop.getLoc(), module, kYieldFunction);
  });
}

struct GpuEmulateLaunchesPass
    : mlir::recur::impl::GpuEmulateLaunchesBase<GpuEmulateLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // Zeroing a buffer needs no device.
    module.walk([&](gpu::MemsetOp memset) {
      rewriter.setInsertionPoint(memset);
      linalg::FillOp::create(rewriter, memset.getLoc(), memset.getValue(),
                             memset.getDst());
      rewriter.eraseOp(memset);
    });
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    Emulator emulator{module, maxPersistentBlocks};
    for (gpu::LaunchOp launch : launches)
      if (failed(emulator.emulate(rewriter, launch)))
        return signalPassFailure();
  }
};

} // namespace
