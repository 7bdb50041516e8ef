//===- VectorizeElementwise.cpp - row-wise generics on vectors ------------===//
//
// The pass: finds the kernels of RowKernels.h (row ops, grouped; row
// gathers; column sums), folds the fills that initialize their outputs, and
// emits each in place of its generic.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseVectors.h"
#include "RowKernels.h"
#include "recur/Codegen/Passes.h"
#include "recur/Utils/Remarks.h"
#include "../BufferViews.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;

namespace {

struct VectorizeElementwisePass
    : mlir::recur::impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth <= 0) {
      getOperation()->emitError(
          "recur-vectorize-elementwise needs a positive vector-width");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    // A reduction's output filled just before it starts from the fill's
    // value instead: the fill (a loop of its own) is gone.
    SmallVector<RowOp> rowOps;
    SmallVector<RowGather> gathers;
    SmallVector<ColumnSum> columnSums;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<RowOp> rowOp = matchRowOp(op, bf16Vectors))
        rowOps.push_back(*rowOp);
      else if (std::optional<RowGather> gather = matchRowGather(op))
        gathers.push_back(*gather);
      else if (std::optional<ColumnSum> sum = matchColumnSum(op))
        columnSums.push_back(*sum);
      else if (!bf16Vectors && matchRowOp(op, /*bf16Vectors=*/true))
        remarkMissed(op, getArgument(),
                     "this conversion to or from bf16 runs as a scalar loop",
                     "the target has no AVX512-BF16 conversions on vectors");
    });
    for (RowGather &gather : gathers) {
      rewriter.setInsertionPoint(gather.op);
      emitRowGather(rewriter, gather, vectorWidth);
      rewriter.eraseOp(gather.op);
    }
    for (ColumnSum &sum : columnSums) {
      if (Operation *fill = findInitializingFill(sum.op, sum.output)) {
        sum.initial = filledValue(fill);
        rewriter.eraseOp(fill);
      }
      rewriter.setInsertionPoint(sum.op);
      emitColumnSum(rewriter, sum, vectorWidth);
      rewriter.eraseOp(sum.op);
    }
    foldInitializingFills(rewriter, rowOps);

    for (RowGroup &group : formRowGroups(rowOps, getArgument())) {
      Operation *last = group.members.back().op;
      SmallVector<std::pair<linalg::CopyOp, Operation *>> copies =
          matchCopies(group);
      SmallVector<CopiedOutput> copied;
      for (auto [copy, writer] : copies) {
        // The copy's target view must exist where the loop writes it.
        moveCopyTargetBefore(rewriter, copy, last);
        copied.push_back({copy.getInputs()[0], copy.getOutputs()[0], writer});
      }
      rewriter.setInsertionPoint(last);
      emitRowGroup(rewriter, group, vectorWidth, copied);
      for (RowOp &member : group.members)
        rewriter.eraseOp(member.op);
      for (auto [copy, writer] : copies)
        rewriter.eraseOp(copy);
    }
  }

  /// The copies right after `group` of outputs its members write, which
  /// its loop can write too, each with the member whose write of its source
  /// writes it: for one member, into a buffer of its own
  /// (matchCopiedOutput: the LSTM step's h into y[t]); for several (a cell's
  /// tail with a layer norm), also into a buffer the group reads, where only
  /// members up to the writer read it, at the element they write, and none
  /// writes it (a recurrence's state, carried to the next step), since each
  /// row runs the members in order.
  static SmallVector<std::pair<linalg::CopyOp, Operation *>>
  matchCopies(RowGroup &group) {
    linalg::GenericOp only = group.members.front().op;
    if (group.members.size() == 1) {
      Value copied;
      if (linalg::CopyOp copy = matchCopiedOutput(
              only, only.getDpsInits(), only->getOperands(), only, copied))
        return {{copy, only}};
      return {};
    }
    Operation *last = group.members.back().op;
    SmallVector<std::pair<linalg::CopyOp, Operation *>> copies;
    DenseSet<Operation *> sources, targets;
    for (Operation *after = last;;) {
      auto copy = dyn_cast_or_null<linalg::CopyOp>(nextWithEffects(after));
      Operation *writer =
          copy ? copyWriter(group, copy, sources, targets) : nullptr;
      if (!writer)
        break;
      copies.push_back({copy, writer});
      after = copy;
    }
    return copies;
  }

  /// The member whose write of `copy`'s source the group can write to its
  /// target too, if there is one: the last member to write the source's
  /// buffer (a cell's tail reuses one buffer for several values), writing
  /// all of the source, element by element. `sources`, `targets`: the
  /// buffers of the copies matched before, which this one must not write,
  /// nor read a target of.
  static Operation *copyWriter(RowGroup &group, linalg::CopyOp copy,
                               DenseSet<Operation *> &sources,
                               DenseSet<Operation *> &targets) {
    Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
    auto targetType = dyn_cast<MemRefType>(target.getType());
    memref::AllocOp targetRoot = rootAllocation(target);
    memref::AllocOp sourceRoot = rootAllocation(source);
    if (!targetType || !targetRoot || !sourceRoot ||
        targetType.getShape() !=
            cast<MemRefType>(source.getType()).getShape() ||
        !targetType.isLastDimUnitStride() || targetRoot == sourceRoot ||
        sources.contains(targetRoot) || targets.contains(targetRoot) ||
        targets.contains(sourceRoot) ||
        !availableBefore(target, group.members.back().op))
      return nullptr;
    std::optional<size_t> writer;
    for (auto [index, member] : llvm::enumerate(group.members))
      for (OpOperand &init : member.op.getDpsInitsMutable())
        if (rootAllocation(init.get()) == sourceRoot)
          writer = init.get() == source && member.reductions.empty() &&
                           member.op.getMatchingIndexingMap(&init).isIdentity()
                       ? std::optional<size_t>(index)
                       : std::nullopt;
    if (!writer)
      return nullptr;
    for (auto [index, member] : llvm::enumerate(group.members))
      for (OpOperand &operand : member.op->getOpOperands()) {
        if (rootAllocation(operand.get()) != targetRoot)
          continue;
        if (operand.get() != target || member.op.isDpsInit(&operand) ||
            index > *writer ||
            !member.op.getMatchingIndexingMap(&operand).isIdentity())
          return nullptr;
      }
    sources.insert(sourceRoot);
    targets.insert(targetRoot);
    return group.members[*writer].op;
  }
};

} // namespace
