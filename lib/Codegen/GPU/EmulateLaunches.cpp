//===- EmulateLaunches.cpp - GPU kernels as OpenMP threads on the CPU -----===//
//
// The GPU path's kernels cannot run where there is no GPU, and a GPU is rare
// where Recur is developed and tested. Here each gpu.launch of the CUDA
// pipeline becomes host code that runs the same kernel body with real
// threads: a block is an OpenMP team with one thread per GPU thread,
// gpu.barrier an OpenMP barrier, workgroup memory a buffer the team shares,
// a gpu.shuffle an exchange through such a buffer between two barriers
// (so, like a barrier, it must be reached by every thread of the block), and
// an nvgpu.mma.sync (a tensor-core MMA of a warp's fragments) likewise.
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
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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
  /// buffer of a value per thread for each type its shuffles and MMAs
  /// exchange (a vector's elements, for an MMA's fragments).
  struct BlockMemory {
    SmallVector<Value> workgroupBuffers;
    DenseMap<Type, Value> exchangeBuffers;
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

/// Whether the emulation knows `mma`'s fragment layouts: PTX's m16n8k8 on
/// tf32 (f32 registers) and m16n8k16 on 16-bit floats, with f32 sums.
bool canEmulate(nvgpu::MmaSyncOp mma) {
  auto aType = cast<VectorType>(mma.getMatrixA().getType());
  auto bType = cast<VectorType>(mma.getMatrixB().getType());
  auto cType = cast<VectorType>(mma.getMatrixC().getType());
  Type element = aType.getElementType();
  int64_t pack = 32 / element.getIntOrFloatBitWidth();
  std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
  bool tf32 = element.isF32() && mma.getTf32Enabled();
  bool half = element.isBF16() || element.isF16();
  return (tf32 || half) && shape[0] == 16 && shape[1] == 8 &&
         shape[2] == (tf32 ? 8 : 16) && bType.getElementType() == element &&
         aType.getShape() == ArrayRef<int64_t>{4, pack} &&
         bType.getShape() == ArrayRef<int64_t>{2, pack} &&
         cType.getShape() == ArrayRef<int64_t>{2, 2} &&
         cType.getElementType().isF32();
}

/// Replaces `mma`, run by thread `thread`, by an exchange of the warp's
/// fragments through `aBuffer` and `bBuffer` (each thread's registers at
/// `thread` x their count): every thread writes its A and B fragments, and
/// after a barrier computes its four sums from its warp's fragments, in
/// PTX's layouts (lane l holds, of A, rows l / 4 (+ 8) and of B column
/// l / 4, at k (l % 4) x pack (+ k / 2)); a second barrier keeps the
/// buffers until all have read. The products are exact in f32 (tf32 and
/// bf16 operands have 11 and 8 significant bits) and are added in k order
/// with fused multiply-adds; a tf32 operand's low 13 bits are dropped, as
/// the tensor cores ignore them.
void emulateMma(RewriterBase &rewriter, nvgpu::MmaSyncOp mma, Value thread,
                Value aBuffer, Value bBuffer) {
  Location loc = mma.getLoc();
  rewriter.setInsertionPoint(mma);
  auto aType = cast<VectorType>(mma.getMatrixA().getType());
  auto bType = cast<VectorType>(mma.getMatrixB().getType());
  Type element = aType.getElementType();
  Type f32 = rewriter.getF32Type();
  int64_t pack = aType.getDimSize(1);
  int64_t k = mma.getMmaShapeAsArray()[2];
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto store = [&](Value fragment, VectorType type, Value buffer) {
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({type.getNumElements()}, element),
        fragment);
    vector::StoreOp::create(
        rewriter, loc, flat, buffer,
        ValueRange{arith::MulIOp::create(rewriter, loc, thread,
                                         index(type.getNumElements()))});
  };
  store(mma.getMatrixA(), aType, aBuffer);
  store(mma.getMatrixB(), bType, bBuffer);
  omp::BarrierOp::create(rewriter, loc);

  Value lane = arith::RemUIOp::create(rewriter, loc, thread, index(32));
  Value warpStart = arith::SubIOp::create(rewriter, loc, thread, lane);
  Value group = arith::DivUIOp::create(rewriter, loc, lane, index(4));
  Value kGroup = arith::RemUIOp::create(rewriter, loc, lane, index(4));
  // Element (r, p) of the fragment of lane `owner` in `buffer`, as f32.
  auto operand = [&](Value buffer, VectorType type, Value owner,
                     Value position) -> Value {
    Value at = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, warpStart, owner),
            index(type.getNumElements())),
        position);
    Value value = memref::LoadOp::create(rewriter, loc, buffer, at);
    if (!element.isF32())
      return arith::ExtFOp::create(rewriter, loc, f32, value);
    Type i32 = rewriter.getI32Type();
    Value bits = arith::AndIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, value),
        arith::ConstantIntOp::create(rewriter, loc, i32,
                                     static_cast<int32_t>(0xFFFFE000)));
    return arith::BitcastOp::create(rewriter, loc, f32, bits);
  };
  SmallVector<Value> sums;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      // Sum (i, j) is row group + 8 i, column 2 (lane % 4) + j.
      Value column = arith::AddIOp::create(
          rewriter, loc, arith::MulIOp::create(rewriter, loc, kGroup, index(2)),
          index(j));
      Value sum = vector::ExtractOp::create(rewriter, loc, mma.getMatrixC(),
                                            ArrayRef<int64_t>{i, j});
      auto loop = scf::ForOp::create(
          rewriter, loc, index(0), index(k), index(1), ValueRange{sum},
          [&](OpBuilder &, Location, Value kk, ValueRange carried) {
            // k splits into halves of k / 2: a lane of group g holds k
            // (l % 4) x pack + p of each half, in register half x 2 + (row
            // / 8) of A and register half of B.
            Value half =
                arith::DivUIOp::create(rewriter, loc, kk, index(k / 2));
            Value inHalf =
                arith::RemUIOp::create(rewriter, loc, kk, index(k / 2));
            Value kLane =
                arith::DivUIOp::create(rewriter, loc, inHalf, index(pack));
            Value p =
                arith::RemUIOp::create(rewriter, loc, inHalf, index(pack));
            Value aOwner = arith::AddIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, group, index(4)), kLane);
            Value aRegister = arith::AddIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, half, index(2)), index(i));
            Value aPosition = arith::AddIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, aRegister, index(pack)),
                p);
            Value bOwner = arith::AddIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, column, index(4)), kLane);
            Value bPosition = arith::AddIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, half, index(pack)), p);
            Value product = math::FmaOp::create(
                rewriter, loc, operand(aBuffer, aType, aOwner, aPosition),
                operand(bBuffer, bType, bOwner, bPosition), carried.front());
            scf::YieldOp::create(rewriter, loc, product);
          });
      sums.push_back(loop.getResult(0));
    }
  omp::BarrierOp::create(rewriter, loc);
  rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
      mma, mma.getMatrixC().getType(), sums);
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
  WalkResult mmas = launch.walk([](nvgpu::MmaSyncOp mma) {
    if (canEmulate(mma))
      return WalkResult::advance();
    mma.emitError("cannot emulate an nvgpu.mma.sync other than m16n8k8 on "
                  "tf32 or m16n8k16 on bf16/f16, with f32 sums");
    return WalkResult::interrupt();
  });
  if (mmas.wasInterrupted())
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
  // Aligned as recur-gpu-align-workgroup-memory aligns them on the device:
  // the kernels' 16-byte vector loads need it.
  for (BlockArgument buffer : launch.getWorkgroupAttributions())
    memory.workgroupBuffers.push_back(memref::AllocaOp::create(
        rewriter, loc, hostType(cast<MemRefType>(buffer.getType())),
        ValueRange(), rewriter.getI64IntegerAttr(recur::kWorkgroupAlignment)));
  // A value of `type` per thread: its elements, for a vector.
  auto addExchangeBuffer = [&](Type type) {
    if (memory.exchangeBuffers.contains(type))
      return;
    Value size = launch.getBlockSizeX();
    Type element = type;
    if (auto vector = dyn_cast<VectorType>(type)) {
      element = vector.getElementType();
      size = arith::MulIOp::create(rewriter, loc, size,
                                   arith::ConstantIndexOp::create(
                                       rewriter, loc, vector.getNumElements()));
    }
    memory.exchangeBuffers[type] = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({ShapedType::kDynamic}, element),
        ValueRange{size});
  };
  launch.walk([&](gpu::ShuffleOp shuffle) {
    addExchangeBuffer(shuffle.getValue().getType());
  });
  launch.walk([&](nvgpu::MmaSyncOp mma) {
    addExchangeBuffer(mma.getMatrixA().getType());
    addExchangeBuffer(mma.getMatrixB().getType());
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
                   memory.exchangeBuffers.at(shuffle.getValue().getType()));
  });
  team.walk([&](nvgpu::MmaSyncOp mma) {
    emulateMma(rewriter, mma, threadX,
               memory.exchangeBuffers.at(mma.getMatrixA().getType()),
               memory.exchangeBuffers.at(mma.getMatrixB().getType()));
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
