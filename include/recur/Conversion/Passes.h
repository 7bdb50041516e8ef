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

/// Marks a fused LSTM step's linalg.generic (one iteration per batch row,
/// hidden unit and, in a wavefront, layer; the four gate sums in registers)
/// for the GPU's weight-stationary schedule, recur-gpu-stationary-weights. A
/// dictionary: `batch`, `unit` and (wavefront) `layer`: iteration dimensions;
/// `hidden`: H per layer; `gate_tiles`: per layer, the tile the weights the
/// step reads are gate interleaved with (0: PyTorch's layout, gate g of unit
/// j at row g * H + j).
constexpr StringLiteral kUnitStepAttrName = "recur.unit_step";

} // namespace mlir::recur

#endif // RECUR_CONVERSION_PASSES_H
