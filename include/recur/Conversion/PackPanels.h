//===- PackPanels.h - a matrix in the panels of the CPU GEMM kernels -*- C++
//-*-===//
//
// The layout the register-tiled CPU kernels read their second operand in:
// what recur.pack_panels lowers to (a weight's rows), and what
// recur-pack-gemm-operands packs a backward GEMM's operand into (a weight's
// or an activation's rows or columns).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_CONVERSION_PACKPANELS_H
#define RECUR_CONVERSION_PACKPANELS_H

#include "mlir/IR/Builders.h"

namespace mlir::recur {

enum class PanelsOf { rows, columns };

/// A linalg.generic packing `source`, a static [R, C] tensor, into panels of
/// `tile` of its rows, [ceil(R / tile), C, tile] with P[p, k, j] =
/// source[p * tile + j, k], or of its columns, [ceil(C / tile), R, tile] with
/// P[p, r, j] = source[r, p * tile + j]; zero past the edge.
Value packPanels(OpBuilder &b, Location loc, Value source, int64_t tile,
                 PanelsOf what);

} // namespace mlir::recur

#endif // RECUR_CONVERSION_PACKPANELS_H
