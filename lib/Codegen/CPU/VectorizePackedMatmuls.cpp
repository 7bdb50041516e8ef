//===- VectorizePackedMatmuls.cpp - register-tiled GEMM kernels -----------===//
//
// C[d..., n] += A[d..., k] * W[n floordiv t, k, n mod t] on buffers, as a
// parallel loop over (blocks of rows, panels of t columns) whose body keeps a
// rows x t tile of C in vector registers across the K loop: per step, one
// contiguous row of the panel, one broadcast element of A per row, and an FMA
// per (row, vector). A fused step's contraction (the LSTM's, a recur.rnn
// cell's) takes the cell that follows it into the tile: the cell runs on the
// accumulators.
//
//===----------------------------------------------------------------------===//

#include "../BufferViews.h"
#include "Contractions.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "PackedMatmuls.h"
#include "recur/Codegen/CpuGemmTile.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurDialect.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/Support/Debug.h"

#include <algorithm>

namespace mlir::recur {
#define GEN_PASS_DEF_VECTORIZEPACKEDMATMULS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

#define DEBUG_TYPE "recur-vectorize-packed-matmuls"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;

namespace {

struct VectorizePackedMatmulsPass
    : mlir::recur::impl::VectorizePackedMatmulsBase<
          VectorizePackedMatmulsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth <= 0 || vectorRegisters < 8 || blockFloats <= 0) {
      getOperation()->emitError(
          "recur-vectorize-packed-matmuls needs a positive vector-width and "
          "block-floats, and vector-registers >= 8");
      return signalPassFailure();
    }
    std::vector<PackedMatmul> matmuls;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (auto matmul = matchPackedMatmul(op, vectorWidth, bf16Dot)) {
        if (!bf16Dot && !matmul->cell) {
          PackedMatmul withRounding = *matmul;
          matchRounding(withRounding);
          if (withRounding.rounding)
            remarkMissed(op, getArgument(),
                         "this GEMM stores f32 results, rounded to bf16 in a "
                         "separate scalar loop",
                         "the target has no AVX512-BF16 conversions on "
                         "vectors");
        }
        matmuls.push_back(*matmul);
        return;
      }
      // Left as it is: the GEMMs the kernels do not take.
      if (op->hasAttr(RecurDialect::kUnitStepAttrName))
        return remarkMissed(op, getArgument(),
                            "the wavefront's fused step runs as a scalar loop "
                            "nest",
                            "the register-tile kernels take one layer's step "
                            "(--fusion=cell)");
      if (op->hasAttr(RecurDialect::kPanelGemmAttrName))
        return remarkMissed(op, getArgument(),
                            "this panel GEMM runs as a scalar loop nest",
                            "the kernels take f32 (or bf16-pair) operands "
                            "with unit-stride rows, a statically shaped "
                            "weight and panels a multiple of the vector "
                            "width");
      if (linalg::isaContractionOpInterface(op) && op.getNumDpsInputs() == 2 &&
          isa<MemRefType>(op.getDpsInputs()[1].getType()) &&
          cast<MemRefType>(op.getDpsInputs()[1].getType()).getRank() == 2 &&
          op.getNumReductionLoops() == 1)
        remarkMissed(op, getArgument(), "this GEMM runs as a scalar loop nest",
                     "its weight is not packed in panels (recur-pack-weights "
                     "runs above --fusion=none)");
    });
    IRRewriter rewriter(&getContext());
    for (PackedMatmul &matmul : matmuls) {
      if (matmul.cell && matmul.cell->copy)
        moveCopyTargetBefore(rewriter, matmul.cell->copy, matmul.op);
      rewriter.setInsertionPoint(matmul.op);
      int64_t tileRows =
          CpuGemmTile::rowsFor(vectorRegisters, matmul.tile / vectorWidth);
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE << ": " << matmul.op.getLoc() << ": " << tileRows
                 << " x " << matmul.tile << " register tiles"
                 << (matmul.pairs ? ", bf16 pairs" : "")
                 << (matmul.cell ? ", the cell fused" : "")
                 << (matmul.bias ? ", from the bias" : "") << "\n");
      // A deep product accumulates its chunks in C: C stays, and so does
      // the rounding after it.
      if (isDeep(matmul, blockFloats) && matmul.rounding) {
        remarkMissed(matmul.op, getArgument(),
                     "this GEMM stores f32 results, rounded to bf16 in a "
                     "separate pass",
                     "its depth is summed in chunks through its output");
        matmul.rounding = {}, matmul.rounded = {};
      }
      if (matmul.rounded && !definedBefore(matmul.rounded, matmul.op))
        rewriter.moveOpBefore(matmul.rounded.getDefiningOp(), matmul.op);
      emitPackedMatmulKernel(rewriter, matmul, vectorWidth, tileRows,
                             blockFloats, bf16Dot);
      rewriter.eraseOp(matmul.op);
      if (matmul.initialization)
        rewriter.eraseOp(matmul.initialization);
      if (matmul.rounding)
        rewriter.eraseOp(matmul.rounding);
      if (matmul.cell) {
        rewriter.eraseOp(matmul.cell->op);
        if (matmul.cell->copy)
          rewriter.eraseOp(matmul.cell->copy);
      }
    }
    // A fused cell's kernels consume their tiles in registers: the gate
    // buffer they still store is dead unless something else reads it.
    // (A recur.rnn cell's separate path for many rows keeps its own.)
    DenseSet<Operation *> fusedWrites;
    for (PackedMatmul &matmul : matmuls)
      if (matmul.cell) {
        fusedWrites.insert(matmul.outputWrites.begin(),
                           matmul.outputWrites.end());
        fusedWrites.insert(matmul.separateAccesses.begin(),
                           matmul.separateAccesses.end());
      }
    for (PackedMatmul &matmul : matmuls) {
      memref::AllocOp root = rootAllocation(matmul.output);
      if (!matmul.cell || !root || usedElsewhere(root.getResult(), fusedWrites))
        continue;
      for (Operation *write : matmul.outputWrites) {
        fusedWrites.erase(write);
        rewriter.eraseOp(write);
      }
      matmul.outputWrites.clear();
    }
  }
};

} // namespace
