//===- Passes.h - Recur's own transformation passes -------------*- C++ -*-===//

#ifndef RECUR_TRANSFORMS_PASSES_H
#define RECUR_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::recur {

#define GEN_PASS_DECL
#include "recur/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recur/Transforms/Passes.h.inc"

} // namespace mlir::recur

#endif // RECUR_TRANSFORMS_PASSES_H
