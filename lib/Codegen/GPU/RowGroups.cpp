//===- RowGroups.cpp - row ops as a block of threads per row --------------===//
//
// A layer norm inside a time loop is a handful of row ops over a few dozen
// rows of a few thousand features. Mapped like any loop nest, each op is a
// phase of the persistent kernel ending in a grid barrier, and each of its
// sums is one thread's chain of dependent adds. Here the ops that share
// rows (the CPU's row groups) run row by row, a row to a block: the ops one
// after the other between block barriers, each op's elements shared out
// among the threads, its sums combined across the block.
//
//===----------------------------------------------------------------------===//

#include "../RowOps.h"
#include "StationaryWeights.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUROWGROUPS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;
using stationary::IndexMath;

namespace {

constexpr int64_t kWarp = 32;

gpu::ParallelLoopDimMappingAttr mappingTo(MLIRContext *context,
                                          gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity,
                                              identity);
}

/// `reduction`'s combiner applied to `accumulated` (for its output's block
/// argument) and `term` (for its value).
Value combine(OpBuilder &b, const RowReduction &reduction, Value accumulated,
              Value term) {
  IRMapping map;
  for (Value operand : reduction.combiner->getOperands())
    map.map(operand, operand == reduction.value ? term : accumulated);
  return b.clone(*reduction.combiner, map)->getResult(0);
}

class RowGroupEmitter {
public:
  RowGroupEmitter(RewriterBase &rewriter, RowGroup &group, int64_t threads,
                  Value partials)
      : b(rewriter), loc(group.members.front().op.getLoc()), e{rewriter, loc},
        group(group), threads(threads), partials(partials) {}

  /// Replaces the group's members by the loops the pass's description
  /// shows, where the last member is (every member's operands exist there;
  /// what is between the members touches no memory they use).
  void emit() {
    MLIRContext *context = b.getContext();
    b.setInsertionPoint(group.members.back().op);
    Value full = group.members.front().fullOperand();
    SmallVector<Value> sizes;
    Value rows;
    for (unsigned dim = 0; dim + 1 < group.rank; ++dim) {
      sizes.push_back(sizeOf(full, dim));
      rows = rows ? e.mul(rows, sizes.back()) : sizes.back();
    }
    if (!rows)
      rows = e.index(1);
    auto rowLoop =
        scf::ParallelOp::create(b, loc, e.index(0), rows, e.index(1));
    (void)gpu::setMappingAttr(rowLoop,
                              {mappingTo(context, gpu::Processor::BlockX)});
    b.setInsertionPointToStart(rowLoop.getBody());
    auto threadLoop = scf::ParallelOp::create(b, loc, e.index(0),
                                              e.index(threads), e.index(1));
    (void)gpu::setMappingAttr(threadLoop,
                              {mappingTo(context, gpu::Processor::ThreadX)});
    b.setInsertionPointToStart(threadLoop.getBody());
    thread = threadLoop.getInductionVars()[0];
    // The row's indices, the last leading dimension fastest.
    SmallVector<Value> leading(sizes.size());
    Value rest = rowLoop.getInductionVars()[0];
    for (size_t dim = sizes.size(); dim-- > 1;) {
      leading[dim] = e.rem(rest, sizes[dim]);
      rest = e.div(rest, sizes[dim]);
    }
    if (!leading.empty())
      leading.front() = rest;
    firstThread = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        thread, e.index(0));
    for (auto [index, member] : llvm::enumerate(group.members)) {
      if (group.isRowScalar(member))
        emitRowScalar(member, leading);
      else if (member.reductions.empty())
        emitElementwise(member, leading);
      else
        emitReduction(member, leading);
      // The next member may read what any thread of the block wrote.
      if (index + 1 < group.members.size())
        gpu::BarrierOp::create(b, loc);
    }
    for (RowOp &member : group.members)
      b.eraseOp(member.op);
  }

private:
  /// Dimension `dim` of `buffer`, a constant where static.
  Value sizeOf(Value buffer, unsigned dim) {
    return getValueOrCreateConstantIndexOp(
        b, loc, memref::getMixedSize(b, loc, buffer, dim));
  }

  /// The row's value of a per-row operand (a rank-0 buffer's one value).
  Value loadRowValue(Value buffer, ArrayRef<Value> leading) {
    return memref::LoadOp::create(
        b, loc, buffer,
        leading.take_front(cast<MemRefType>(buffer.getType()).getRank()));
  }

  /// Maps `member`'s block arguments to its operands' elements at column j
  /// of the row (per-row operands at the row; a reduction's outputs are its
  /// combiners', which are not cloned) and its linalg.index ops to the
  /// indices; clones its body but for `skipped`.
  void cloneBody(RowOp &member, ArrayRef<Value> leading, Value j,
                 IRMapping &mapping, ArrayRef<Operation *> skipped = {}) {
    linalg::GenericOp op = member.op;
    SmallVector<Value> indices(leading);
    indices.push_back(j);
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument argument = op.getMatchingBlockArgument(&operand);
      if (argument.use_empty() || mapping.contains(argument) ||
          (op.isDpsInit(&operand) && !member.reductions.empty()))
        continue;
      if (member.isRowOperand(operand)) {
        mapping.map(argument, loadRowValue(operand.get(), leading));
        continue;
      }
      AffineMap map = op.getMatchingIndexingMap(&operand);
      SmallVector<Value> at;
      for (unsigned result = 0; result < map.getNumResults(); ++result)
        at.push_back(indices[map.getDimPosition(result)]);
      mapping.map(argument, memref::LoadOp::create(b, loc, operand.get(), at));
    }
    for (Operation &nested : op.getBody()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(nested))
        mapping.map(index.getResult(), indices[index.getDim()]);
      else if (!llvm::is_contained(skipped, &nested))
        b.clone(nested, mapping);
    }
  }

  /// `body(j)` for the row's columns j = thread, thread + threads, ...
  /// below the length of `member`'s rows, carrying `initial`.
  ValueRange columnLoop(
      RowOp &member, ValueRange initial,
      function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> body) {
    Value length = sizeOf(member.fullOperand(), group.rank - 1);
    auto loop = scf::ForOp::create(
        b, loc, thread, length, e.index(threads), initial,
        [&](OpBuilder &nb, Location, Value j, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(b, j, carried));
        });
    return loop.getResults();
  }

  void emitElementwise(RowOp &member, ArrayRef<Value> leading) {
    linalg::GenericOp op = member.op;
    columnLoop(member, {}, [&](OpBuilder &, Value j, ValueRange) {
      IRMapping mapping;
      cloneBody(member, leading, j, mapping);
      SmallVector<Value> indices(leading);
      indices.push_back(j);
      for (auto [value, init] : llvm::zip(
               op.getBody()->getTerminator()->getOperands(), op.getDpsInits()))
        memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value), init,
                                indices);
      return SmallVector<Value>();
    });
  }

  /// An elementwise op on per-row values: thread 0 computes the row's.
  void emitRowScalar(RowOp &member, ArrayRef<Value> leading) {
    linalg::GenericOp op = member.op;
    scf::IfOp::create(b, loc, firstThread, [&](OpBuilder &nb, Location) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      IRMapping mapping;
      for (OpOperand &operand : op->getOpOperands()) {
        BlockArgument argument = op.getMatchingBlockArgument(&operand);
        if (!argument.use_empty())
          mapping.map(argument, loadRowValue(operand.get(), leading));
      }
      for (Operation &nested : op.getBody()->without_terminator())
        b.clone(nested, mapping);
      for (auto [value, output] : llvm::zip(
               op.getBody()->getTerminator()->getOperands(), op.getDpsInits()))
        memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value), output,
                                leading.take_front(group.rank - 1));
      scf::YieldOp::create(b, loc);
    });
  }

  /// `values` each combined over the lanes of its warp whose index differs
  /// in the bits below `span` (a power of two): every lane gets its
  /// group's result.
  SmallVector<Value> butterfly(RowOp &member, SmallVector<Value> values,
                               int64_t span) {
    for (int64_t offset = span / 2; offset >= 1; offset /= 2)
      for (auto [value, reduction] : llvm::zip(values, member.reductions)) {
        Value other =
            gpu::ShuffleOp::create(b, loc, value, offset,
                                   /*width=*/kWarp, gpu::ShuffleMode::XOR)
                .getShuffleResult();
        value = combine(b, reduction, value, other);
      }
    return values;
  }

  void emitReduction(RowOp &member, ArrayRef<Value> leading) {
    linalg::GenericOp op = member.op;
    SmallVector<Value> neutral;
    SmallVector<Operation *> combiners;
    for (RowReduction &reduction : member.reductions) {
      neutral.push_back(arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(float(reduction.neutral))));
      combiners.push_back(reduction.combiner);
    }
    // Thread t's terms, then its warp's, then the block's through
    // `partials`, which every warp reads (each then has the results; every
    // thread reaches every shuffle).
    SmallVector<Value> results(columnLoop(
        member, neutral, [&](OpBuilder &, Value j, ValueRange carried) {
          IRMapping mapping;
          cloneBody(member, leading, j, mapping, combiners);
          SmallVector<Value> next;
          for (auto [reduction, accumulated] :
               llvm::zip(member.reductions, carried))
            next.push_back(combine(b, reduction, accumulated,
                                   mapping.lookupOrDefault(reduction.value)));
          return next;
        }));
    results = butterfly(member, results, kWarp);
    int64_t warps = threads / kWarp;
    if (warps > 1) {
      Value lane = e.rem(thread, e.index(kWarp));
      Value warp = e.div(thread, e.index(kWarp));
      Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              lane, e.index(0));
      scf::IfOp::create(b, loc, firstLane, [&](OpBuilder &nb, Location) {
        IndexMath n{nb, loc};
        for (auto [index, result] : llvm::enumerate(results))
          memref::StoreOp::create(nb, loc, result, partials,
                                  n.add(n.index(index * warps), warp));
        scf::YieldOp::create(nb, loc);
      });
      gpu::BarrierOp::create(b, loc);
      Value hasPartial = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, lane, e.index(warps));
      Value source = arith::MinUIOp::create(b, loc, lane, e.index(warps - 1));
      for (size_t index = 0; index < results.size(); ++index) {
        Value partial = memref::LoadOp::create(
            b, loc, partials, e.add(e.index(index * warps), source));
        results[index] = arith::SelectOp::create(b, loc, hasPartial, partial,
                                                 neutral[index]);
      }
      results = butterfly(member, results, llvm::PowerOf2Ceil(warps));
      // The buffer is free for the block's next reduction.
      gpu::BarrierOp::create(b, loc);
    }
    scf::IfOp::create(b, loc, firstThread, [&](OpBuilder &nb, Location) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      for (auto [reduction, result, output] :
           llvm::zip(member.reductions, results, op.getDpsInits())) {
        Value initial = reduction.initial ? reduction.initial
                                          : loadRowValue(output, leading);
        memref::StoreOp::create(b, loc, combine(b, reduction, initial, result),
                                output, leading);
      }
      scf::YieldOp::create(b, loc);
    });
  }

  RewriterBase &b;
  Location loc;
  IndexMath e;
  RowGroup &group;
  int64_t threads;
  /// A float per warp and reduction, in workgroup memory.
  Value partials;
  Value thread, firstThread;
};

struct GpuRowGroupsPass
    : mlir::recur::impl::GpuRowGroupsBase<GpuRowGroupsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<RowOp> rowOps;
    WalkResult walked = func.walk([&](linalg::GenericOp op) {
      if (!op->hasAttr(RecurDialect::kGpuRowGroupAttrName))
        return WalkResult::advance();
      std::optional<RowOp> rowOp = matchRowOp(op, /*bf16Vectors=*/false);
      if (!rowOp) {
        op.emitError() << getArgument()
                       << ": the loop nest is not a row op (an elementwise op "
                          "or a reduction along the last dimension, on f32 "
                          "buffers)";
        return WalkResult::interrupt();
      }
      rowOps.push_back(*rowOp);
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    // A reduction's output filled just before it starts from the fill's
    // value instead: the fill (a phase of its own) is gone.
    foldInitializingFills(rewriter, rowOps);
    for (RowGroup &group : formRowGroups(rowOps, /*pass=*/"")) {
      auto config = group.members.front().op->getAttrOfType<GpuRowGroupAttr>(
          RecurDialect::kGpuRowGroupAttrName);
      int64_t threads = config.getBlockSize();
      size_t results = 1;
      for (RowOp &member : group.members)
        results = std::max(results, member.reductions.size());
      // At the function's entry, made a workgroup attribution of the
      // kernel that uses it by recur-gpu-workgroup-attributions.
      rewriter.setInsertionPointToStart(&func.getFunctionBody().front());
      auto type =
          MemRefType::get({int64_t(results) * (threads / kWarp)},
                          rewriter.getF32Type(), AffineMap(),
                          gpu::AddressSpaceAttr::get(
                              &getContext(), gpu::AddressSpace::Workgroup));
      Value partials = memref::AllocOp::create(
          rewriter, group.members.front().op.getLoc(), type);
      RowGroupEmitter(rewriter, group, threads, partials).emit();
    }
  }
};

} // namespace
