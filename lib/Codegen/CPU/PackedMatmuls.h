//===- PackedMatmuls.h - GEMMs on packed weights ----------------*- C++ -*-===//
//
// What recur-vectorize-packed-matmuls' two halves share: a packed GEMM as
// the conversion left it (PackedMatmul: its operands, what set C before it,
// the fused step's cell or rounding that follows it), found by
// PackedMatmuls.cpp, and the register-tiled kernel that replaces it
// (PackedMatmulKernel.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_CPU_PACKEDMATMULS_H
#define RECUR_LIB_CODEGEN_CPU_PACKEDMATMULS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::recur::cpu {

/// The elementwise op after a fused step's contraction, which reads C
/// ([d..., Q * G * K], the columns of gate g of units qK..qK+K-1 at qK*G +
/// gK; an LSTM's G = 4) as [d..., Q, G, K], its other operands ([d..., Q *
/// K] buffers) as [d..., Q, K] and its column operands ([Q * K]) as [Q, K]:
/// the cell, over loops (d..., q, l). Its kernel runs on the accumulators of
/// the tile whose panel holds the G gates of those K units.
struct FusedCell {
  linalg::GenericOp op;
  int64_t gateTile = 0;
  /// Per operand: the gate it reads from C, or -1 for the others ...
  SmallVector<int64_t> gateOf;
  /// ... which are views of these [d..., Q * K] (or [Q * K]) buffers ...
  SmallVector<Value> unitBuffers;
  /// ... read by unit alone when a column.
  SmallVector<bool> columns;
  /// Per gate: the operand the cell adds to it and uses for nothing else
  /// (x_t's part of a gate's sum), or -1. The tile starts from it, and the
  /// additions (`startAdds`) are not run again.
  SmallVector<int64_t> startOperand;
  SmallVector<Operation *> startAdds;
  /// h_t copied into y[t] right after: the kernel writes it there too.
  linalg::CopyOp copy;
  Value copied;
};

/// A contraction over a packed weight and what its kernel reads.
struct PackedMatmul {
  linalg::GenericOp op;
  Value input; // A [d..., K], or [K, M] when `transposedInput` (C [M, N])
  bool transposedInput = false;
  Value weight; // W [P, K, t] ([P, K / 2, t, 2] when `pairs`), or [K, N]
                // read in place when `inPlaceWeight`
  bool inPlaceWeight = false;
  /// bf16 products: A is bf16 [d..., K] and W bf16 in pairs of k, [P, K / 2,
  /// t, 2] (recur.pack_panels ... pairs).
  bool pairs = false;
  int64_t tile = 0; // t, the panel's columns
  Value output;     // C [d..., N]
  /// [N]: C was filled with it by `initialization` right before the
  /// contraction.
  Value bias;
  /// Shaped like C: C was a fresh buffer that `initialization` copied it into.
  Value initial;
  /// C was filled with zeros by `initialization`: the tiles start from 0.
  bool zeroStart = false;
  /// [d..., 4 * Q * K], gates in PyTorch's order (i, f, g, o): C was set to it
  /// with the gates of K units side by side (columns in the interleaved order
  /// of the fused LSTM step's w_hh, `gateTile` = K).
  Value gateSource;
  /// K, when C's panels are the gates of K units (`gateSource`, `cell`).
  int64_t gateTile = 0;
  Operation *initialization = nullptr;
  std::optional<FusedCell> cell;
  /// The elementwise generic right after that rounds all of C to bf16 into
  /// `rounded` (a bf16 model's logits), when nothing else reads C: the
  /// kernel stores the rounded tiles there instead of C.
  linalg::GenericOp rounding;
  Value rounded;
  /// The kernel's stores of C.
  SmallVector<Operation *> outputWrites;
  /// A cell's separate path for many rows (see emitPackedMatmulKernel): its
  /// stores of C and the tail's loads of them, which must stay.
  SmallVector<Operation *> separateAccesses;
};

/// `op`, a contraction with a #recur.panel_gemm, as a packed GEMM the
/// kernels take, with what sets C before it and the cell it feeds;
/// `bf16Vectors` is whether the target converts bf16 vectors.
std::optional<PackedMatmul>
matchPackedMatmul(linalg::GenericOp op, int64_t vectorWidth, bool bf16Vectors);

/// Takes the rounding of `matmul`'s result to bf16 that follows it into the
/// kernel, if there is one (PackedMatmul::rounding).
void matchRounding(PackedMatmul &matmul);

/// Whether `buffer` (or a view of it) is used by an op outside `ignored`.
bool usedElsewhere(Value buffer, const DenseSet<Operation *> &ignored);

/// Whether `matmul`'s kernel sums K in chunks through C (a K of more than
/// `blockFloats` / t elements, or a dynamic one): C stays, and what
/// followed it.
bool isDeep(const PackedMatmul &matmul, int64_t blockFloats);

/// Emits `matmul`'s kernel at the rewriter's insertion point: tiles of
/// `tileRows` rows and matmul.tile columns in vector registers of
/// `vectorWidth` lanes, rows blocked by `blockFloats`, bf16 pairs by
/// `bf16Dot` products (else widened). A recur.rnn cell's tail (a cell
/// without a gate source) runs on the tiles for up to 16 rows; for more, the
/// kernel stores C and a pass of its own applies the tail.
void emitPackedMatmulKernel(RewriterBase &rewriter, PackedMatmul &matmul,
                            int64_t vectorWidth, int64_t tileRows,
                            int64_t blockFloats, bool bf16Dot);

} // namespace mlir::recur::cpu

#endif // RECUR_LIB_CODEGEN_CPU_PACKEDMATMULS_H
