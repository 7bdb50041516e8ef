//===- Contractions.h - the GEMM form of the CPU kernels --------*- C++ -*-===//
//
// What recur-pack-gemm-operands produces and recur-vectorize-packed-matmuls
// matches: a linalg.generic whose body multiplies and accumulates.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_CPU_CONTRACTIONS_H
#define RECUR_LIB_CODEGEN_CPU_CONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::recur {

/// The body is `out + in0 * in1` (in either operand order); with
/// `extendedInputs`, the inputs may be extended (`arith.extf`) first: a
/// bf16 product with f32 sums.
bool isMultiplyAccumulate(linalg::GenericOp op, bool extendedInputs = false);

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_CPU_CONTRACTIONS_H
