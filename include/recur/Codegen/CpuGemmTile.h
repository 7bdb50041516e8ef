//===- CpuGemmTile.h - Register tile of the CPU GEMM kernels ----*- C++ -*-===//
//
// One place that turns a target's vector registers into the shape of the
// GEMM register tile: the weight packing (recur-pack-weights) and the kernel
// (recur-vectorize-packed-matmuls) must agree on it.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_CODEGEN_CPUGEMMTILE_H
#define RECUR_CODEGEN_CPUGEMMTILE_H

#include <algorithm>
#include <cstdint>

namespace mlir::recur {

/// `rows` x `columns` f32 outputs accumulated in vector registers of
/// `vectorWidth` lanes across the whole K loop.
struct CpuGemmTile {
  int64_t vectorWidth = 0;
  int64_t vectorRegisters = 0;
  int64_t rows = 0;
  int64_t columns = 0;

  /// The tile for `vectorRegisters` registers of `vectorWidth` f32 lanes
  /// (AVX-512: 32 x 16, AVX2: 16 x 8); vectorWidth 0 is no tile (scalar
  /// loops). The accumulators take all registers but the tile row of
  /// weights and one broadcast input: 6 x 64 with AVX-512, 6 x 16 with AVX2.
  static CpuGemmTile forTarget(int64_t vectorWidth, int64_t vectorRegisters) {
    if (vectorWidth <= 0 || vectorRegisters < 8)
      return {};
    int64_t vectorsPerRow = vectorRegisters >= 32 ? 4 : 2;
    return {vectorWidth, vectorRegisters,
            rowsFor(vectorRegisters, vectorsPerRow),
            vectorsPerRow * vectorWidth};
  }

  /// Rows of a tile `vectorsPerRow` vectors wide: its accumulators take all
  /// registers but one row of weights and a broadcast input, up to 6 rows
  /// (then the K loop's loads of A, one per row, begin to dominate).
  static int64_t rowsFor(int64_t vectorRegisters, int64_t vectorsPerRow) {
    return std::clamp<int64_t>(
        (vectorRegisters - vectorsPerRow - 1) / vectorsPerRow, 1, 6);
  }

  bool enabled() const { return vectorWidth > 0; }
};

} // namespace mlir::recur

#endif // RECUR_CODEGEN_CPUGEMMTILE_H
