//===- PackPanels.h - a matrix in the CPU GEMM kernels' panels -*- C++ -*-===//
//
// The layout the register-tiled CPU kernels read a transposed second operand
// in: what recur.pack_panels lowers to, and what recur-pack-gemm-operands
// packs a backward GEMM's unpacked weight into (x · wᵀ). (An operand used
// untransposed, d · w, is read in place.)
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_PACKPANELS_H
#define RECUR_UTILS_PACKPANELS_H

#include "mlir/IR/Builders.h"

namespace mlir::recur {

/// A linalg.generic packing `source`, a static [R, C] tensor, into panels of
/// `tile` of its rows, [ceil(R / tile), C, tile] with P[p, k, j] =
/// source[p * tile + j, k]; zero past the edge. In `pairs` of k (C even):
/// [ceil(R / tile), C / 2, tile, 2] with P[p, i, j, s] =
/// source[p * tile + j, 2i + s].
Value packPanels(OpBuilder &b, Location loc, Value source, int64_t tile,
                 bool pairs = false);

} // namespace mlir::recur

#endif // RECUR_UTILS_PACKPANELS_H
