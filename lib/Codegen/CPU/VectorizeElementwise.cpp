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
      if (linalg::FillOp fill = findInitializingFill(sum.op, sum.output)) {
        sum.initial = fill.getInputs()[0];
        rewriter.eraseOp(fill);
      }
      rewriter.setInsertionPoint(sum.op);
      emitColumnSum(rewriter, sum, vectorWidth);
      rewriter.eraseOp(sum.op);
    }
    for (RowOp &rowOp : rowOps)
      for (auto [reduction, output] :
           llvm::zip(rowOp.reductions, rowOp.op.getDpsInits()))
        if (linalg::FillOp fill = findInitializingFill(rowOp.op, output)) {
          reduction.initial = fill.getInputs()[0];
          rewriter.eraseOp(fill);
        }

    for (RowGroup &group : formGroups(rowOps)) {
      Operation *last = group.members.back().op;
      Value copied;
      linalg::CopyOp copy;
      if (linalg::GenericOp only = group.members.front().op;
          group.members.size() == 1)
        copy = matchCopiedOutput(only, only.getDpsInits(), only->getOperands(),
                                 only, copied);
      // The copy's target view must exist where the loop writes it.
      if (copy)
        moveCopyTargetBefore(rewriter, copy, last);
      rewriter.setInsertionPoint(last);
      emitRowGroup(rewriter, group, vectorWidth, copied,
                   copy ? copy.getOutputs()[0] : Value());
      for (RowOp &member : group.members)
        rewriter.eraseOp(member.op);
      if (copy)
        rewriter.eraseOp(copy);
    }
  }

  /// Row ops in program order, grouped where consecutive ones (nothing but
  /// movable ops between them) share rows.
  static SmallVector<RowGroup> formGroups(ArrayRef<RowOp> rowOps) {
    SmallVector<RowGroup> groups;
    Operation *previous = nullptr;
    for (RowOp rowOp : rowOps) {
      bool adjacent = previous && previous->getBlock() == rowOp.op->getBlock();
      for (Operation *between = previous ? previous->getNextNode() : nullptr;
           adjacent && between != rowOp.op.getOperation();
           between = between->getNextNode())
        adjacent = between && canMovePast(between);
      if (!adjacent || !groups.back().tryAdd(rowOp))
        groups.push_back({rowOp.op.getNumLoops(), {rowOp}});
      previous = rowOp.op;
    }
    return groups;
  }
};

} // namespace
