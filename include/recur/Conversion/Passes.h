//===- Passes.h - Conversions out of the recur dialect ----------*- C++ -*-===//

#ifndef RECUR_CONVERSION_PASSES_H
#define RECUR_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::recur {

#define GEN_PASS_DECL
#include "recur/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recur/Conversion/Passes.h.inc"

} // namespace mlir::recur

#endif // RECUR_CONVERSION_PASSES_H
