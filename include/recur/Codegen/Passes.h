//===- Passes.h - Target code generation passes -----------------*- C++ -*-===//

#ifndef RECUR_CODEGEN_PASSES_H
#define RECUR_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "recur/Codegen/Precision.h"
#include "recur/IR/RecurDialect.h"

namespace mlir::recur {

#define GEN_PASS_DECL
#include "recur/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recur/Codegen/Passes.h.inc"

/// Marks the scf.if in which recur-gpu-stationary-weights loads a block's
/// weights into shared memory: recur-gpu-persistent-kernels hoists the load
/// out of the time loop where it can.
constexpr StringLiteral kStageWeightsAttrName = "recur.stage_weights";

/// The alignment of kernels' shared-memory buffers, on the device
/// (recur-gpu-align-workgroup-memory) and in the CUDA emulator: the widest
/// shared-memory access kernels make is a vector of four f32.
constexpr int64_t kWorkgroupAlignment = 16;

} // namespace mlir::recur

#endif // RECUR_CODEGEN_PASSES_H
