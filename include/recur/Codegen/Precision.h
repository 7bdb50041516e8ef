//===- Precision.h - the precision of a model's products --------*- C++ -*-===//
//
// What the GEMMs and the recurrence's steps multiply in (DESIGN.md's
// precision modes), as an option's values. The enum is the dialect's, which
// the lowering configs carry.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_CODEGEN_PRECISION_H
#define RECUR_CODEGEN_PRECISION_H

#include "recur/IR/RecurOps.h" // the Precision enum, fp32 | tf32 | bf16

#include "llvm/Support/CommandLine.h"

/// The precisions as the values of a pass or pipeline option.
#define RECUR_PRECISION_VALUES                                                 \
  ::llvm::cl::values(                                                          \
      clEnumValN(::mlir::recur::Precision::fp32, "fp32",                       \
                 "f32 products (SIMT FMAs on the GPU)"),                       \
      clEnumValN(::mlir::recur::Precision::tf32, "tf32", "TF32 tensor cores"), \
      clEnumValN(::mlir::recur::Precision::bf16, "bf16",                       \
                 "bf16 operands (tensor cores on the GPU)"))

#endif // RECUR_CODEGEN_PRECISION_H
