//===- GemmKernels.h - what the tiled GEMM kernels share --------*- C++ -*-===//
//
// recur-gpu-tiled-gemms writes each GEMM outside a time loop as one of two
// kernels: SIMT FMAs in fp32 (TiledGemms.cpp), or tensor-core MMAs in tf32
// or bf16 (MmaGemms.cpp). Both take the same GEMMs, launch a block per
// output tile, stage k-slices of both operands in shared memory from
// registers loaded during the previous slice, and add their sums to the
// output inside its bounds.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_GPU_GEMMKERNELS_H
#define RECUR_LIB_CODEGEN_GPU_GEMMKERNELS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "recur/Codegen/Precision.h"

namespace mlir::recur::gemm {

/// The widest vector a thread loads from global memory (16 bytes of f32).
constexpr int64_t kMaxLoadWidth = GpuGemmAttr::kMaxLoadWidth;

/// A GEMM that the kernels compute: `c[m..., n...] += a[m..., k] * b[n...,
/// k]` for a linalg.generic on f32 buffers, with m and n standing for any
/// number of loop dimensions (the output's rows and columns, in the output's
/// order) and k the one reduction, the innermost index of both operands.
/// One marked recur.active_rows has the rows (t, b) and adds to those with
/// t < lengths[b] only, a packed batch's tokens: `tokensBefore[t]` is the
/// number of tokens before step t, and the rows of step t's tokens are the
/// first ones (rows sorted by length) or, with `order` (the rows in order
/// of decreasing length), order[0], order[1], ...
struct Gemm {
  linalg::GenericOp op;
  OpOperand *a, *b, *c;
  SmallVector<unsigned> mDims, nDims;
  unsigned kDim;
  OpOperand *lengths = nullptr, *tokensBefore = nullptr,
            *order = nullptr; // active rows only; order if not sorted
};

/// `op` as a Gemm the kernels handle, if it is one. A contraction that is
/// not says why in `whyNot`, if given.
std::optional<Gemm> matchGemm(linalg::GenericOp op,
                              std::string *whyNot = nullptr);

/// A GEMM's launch: a block per `tileM` x `tileN` output tile (row tiles in
/// x, column tiles in y), `threads` threads, the GEMM's loop extents, and
/// the values every kernel form starts from. The kernel's ops go before
/// `bodyEnd`.
///
/// The rows of a GEMM with active rows are its tokens, numbered step by
/// step (PackedSequence's order): token p is row (t, p - tokensBefore[t])
/// (or (t, order[p - tokensBefore[t]])) for the last t with tokensBefore[t]
/// <= p, found by bisection. A block
/// whose first token is past the last does nothing, so the blocks that
/// work are those of the tokens.
struct GemmLaunch {
  gpu::LaunchOp launch;
  Operation *bodyEnd;
  SmallVector<Value> extents; // by loop dimension
  Value rows, columns, depth; // M, N, K (products of the m and n extents)
  Value threadId, rowTile,
      columnTile; // in the kernel: tile's first row, column

  /// Token `token`'s row of a GEMM with active rows: whether it is one of
  /// the tokens, and its row's index by loop dimension (inside the
  /// operands past the last token).
  struct Row {
    Value inside;
    SmallVector<Value> byDim;
  };
  Row tokenRow(OpBuilder &b, Location loc, const Gemm &gemm, Value token) const;

  /// A workgroup buffer of `shape` x `elementType`.
  Value addSharedBuffer(ArrayRef<int64_t> shape, Type elementType);
  /// c[row, column] += sum for each (column, sum) of `columnSums` inside the
  /// output, where `row` is.
  void accumulate(OpBuilder &b, const Gemm &gemm, Value row,
                  ArrayRef<std::pair<Value, Value>> columnSums) const;
};

/// Creates the launch of kernel `name` for `gemm`, before it.
GemmLaunch createGemmLaunch(RewriterBase &rewriter, const Gemm &gemm,
                            int64_t tileM, int64_t tileN, int64_t threads,
                            StringRef name);

/// One operand's k-slices: the parts, `width` consecutive k of one tile
/// row each, that a thread loads into registers. Thread t loads parts t,
/// t + threads, ... of the slice, numbered row-major (`kTileSize / width`
/// parts per row). Rows past the operand's last are loaded from the last
/// (their results are never stored); k past K reads zeros, which add
/// nothing to the sums.
struct OperandSlices {
  struct Part {
    Value row;                     // within the tile
    Value kOffset;                 // within the slice
    SmallVector<Value> rowIndices; // the row's index, by loop dimension
  };
  OpOperand *operand;
  AffineMap map;
  int64_t width;
  bool vectorLoads;
  Value depth;       // K
  int64_t kTileSize; // k per slice
  unsigned kDim;     // the reduction's loop dimension
  SmallVector<Part> parts;

  VectorType registerType() const;
  /// The thread's parts of k-slice `kTile`, from global memory.
  SmallVector<Value> load(OpBuilder &b, Location loc, Value kTile) const;
  /// Zeros of the parts' types (the slices of an empty K).
  SmallVector<Value> zeros(OpBuilder &b, Location loc) const;
};

/// The slices of `operand`, whose rows are `rowDims`, for tiles of
/// `tileRows` rows starting at `tileStart`, `kTile` k per slice, loaded in
/// parts of `width` k by `threads` threads.
OperandSlices makeOperandSlices(OpBuilder &b, Location loc,
                                const GemmLaunch &launch, const Gemm &gemm,
                                OpOperand *operand, ArrayRef<unsigned> rowDims,
                                int64_t tileRows, Value tileStart,
                                Value rowCount, int64_t kTile, int64_t width,
                                int64_t threads);

/// The k-slice loop of both kernels: the first slice's parts are loaded
/// before the loop; each iteration stores the current parts into shared
/// memory (`stage`, given A's and B's parts), waits at a barrier, loads the
/// next slice's parts (the last slice reloads itself) and, while they
/// arrive, multiplies the staged slice (`multiply`, which updates the sums);
/// a second barrier keeps the stage until every thread has read it.
/// Returns the sums after the last slice.
SmallVector<Value> buildSliceLoop(
    OpBuilder &b, Location loc, const GemmLaunch &launch, int64_t kTile,
    const OperandSlices &aSlices, const OperandSlices &bSlices,
    ValueRange initialSums,
    function_ref<void(OpBuilder &, ValueRange, ValueRange)> stage,
    function_ref<void(OpBuilder &, SmallVectorImpl<Value> &)> multiply);

/// Whether `buffer`'s rows can be loaded as aligned vectors of `width`
/// elements starting at multiples of `width`: the layout keeps them
/// contiguous and aligned, and the buffer is the model's own (a caller's
/// CUDA input is used in place, with whatever alignment it has).
bool canLoadRowVectors(Value buffer, int64_t width);

/// The MMA operand type of `precision`: null for fp32 (no MMAs), f32
/// (holding tf32) for tf32, bf16 for bf16.
Type mmaOperandType(MLIRContext *context, Precision precision);

/// `value` (f32, or a vector of f32) as an MMA operand of `operandType`: for
/// tf32 (f32), rounded to 10 mantissa bits, to nearest with ties away from
/// zero as cvt.rna.tf32.f32, infinities and NaNs kept (the tensor cores
/// ignore the 13 low bits, which become zero); for bf16, truncated to
/// nearest even.
Value roundToOperandType(OpBuilder &b, Location loc, Value value,
                         Type operandType);

/// Tensor-core kernel sizes (a #recur.gpu_gemm's on tensor cores).
struct MmaTiles {
  int64_t m, n, k;      // the block's output tile and k-slice
  int64_t warpM, warpN; // each warp's part of the output tile
  Type operandType;     // f32 (holding tf32) or bf16, in shared memory
  int64_t warps() const { return (m / warpM) * (n / warpN); }
  int64_t threads() const { return warps() * 32; }
  /// Elements of a k-slice each thread loads, for an operand of `rows` rows,
  /// and the parts of up to kMaxLoadWidth consecutive k they come in.
  int64_t elementsPerThread(int64_t rows) const { return rows * k / threads(); }
  int64_t loadWidth(int64_t rows) const {
    return std::min(kMaxLoadWidth, elementsPerThread(rows));
  }
  bool tf32() const { return operandType.isF32(); }
  /// k of one mma.sync: 8 for tf32, 16 for bf16 (m16n8k8, m16n8k16).
  int64_t mmaK() const { return tf32() ? 8 : 16; }
};

/// Replaces `gemm` by a launch of kernel `name` that computes it with
/// nvgpu.mma.sync (MmaGemms.cpp).
void buildMmaGemmKernel(RewriterBase &rewriter, const Gemm &gemm,
                        const MmaTiles &tiles, StringRef name);

} // namespace mlir::recur::gemm

#endif // RECUR_LIB_CODEGEN_GPU_GEMMKERNELS_H
