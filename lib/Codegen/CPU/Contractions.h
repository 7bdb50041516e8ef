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

/// The body is `out + in0 * in1` (in either operand order).
bool isMultiplyAccumulate(linalg::GenericOp op);

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_CPU_CONTRACTIONS_H
