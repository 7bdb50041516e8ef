//===- Precision.h - the precision of a model's products --------*- C++ -*-===//
//
// What the GEMMs and the recurrence's steps multiply in (DESIGN.md's
// precision modes). Sums are f32 in every mode.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_CODEGEN_PRECISION_H
#define RECUR_CODEGEN_PRECISION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

namespace mlir::recur {

enum class Precision {
  fp32, // f32 operands, strict (no TF32)
  tf32, // f32 operands rounded to TF32 on the tensor cores
  bf16, // bf16 operands
};

inline llvm::StringRef stringifyPrecision(Precision precision) {
  switch (precision) {
  case Precision::fp32:
    return "fp32";
  case Precision::tf32:
    return "tf32";
  case Precision::bf16:
    return "bf16";
  }
  llvm_unreachable("unknown precision");
}

inline std::optional<Precision> symbolizePrecision(llvm::StringRef name) {
  for (Precision precision :
       {Precision::fp32, Precision::tf32, Precision::bf16})
    if (name == stringifyPrecision(precision))
      return precision;
  return std::nullopt;
}

} // namespace mlir::recur

/// The precisions as the values of a pass or pipeline option.
#define RECUR_PRECISION_VALUES                                                 \
  ::llvm::cl::values(                                                          \
      clEnumValN(::mlir::recur::Precision::fp32, "fp32",                       \
                 "f32 products (SIMT FMAs on the GPU)"),                       \
      clEnumValN(::mlir::recur::Precision::tf32, "tf32", "TF32 tensor cores"), \
      clEnumValN(::mlir::recur::Precision::bf16, "bf16",                       \
                 "bf16 operands (tensor cores on the GPU)"))

#endif // RECUR_CODEGEN_PRECISION_H
