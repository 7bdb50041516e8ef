//===- ModuleAbi.h - the runtime's entry points in a model ------*- C++ -*-===//
//
// What recur-compile adds to a lowered model's LLVM IR for librecur-runtime
// (the ABI of recur/runtime.h): the exported description, run and prologue
// entries, checked heap allocations, and for CUDA models the GPU runtime
// functions bound through pointers and the kernels' loading exported.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_TARGET_MODULEABI_H
#define RECUR_LIB_TARGET_MODULEABI_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/IR/Module.h"

namespace mlir::recur {

/// Adds the runtime's entry points next to the lowered model: its
/// description, its run function (over @forward, `numArguments` arguments)
/// and its weight prologue's (if any).
void addRuntimeAbi(llvm::Module &module, StringRef description,
                   unsigned numArguments, StringRef prologue,
                   unsigned numPrologueArguments);

/// A CPU model's heap: every allocation of the entry and its prologue is
/// checked (out of memory becomes an error value), and malloc,
/// aligned_alloc and free go through hooks the runtime sets. Fails, on
/// `module`, where a heap call is outside them.
LogicalResult addCheckedHeap(ModuleOp module, llvm::Module &llvmModule,
                             StringRef prologue);

/// A CUDA model's GPU runtime functions bound through pointers the runtime
/// sets, and its kernels' loading and unloading exported instead of run as
/// global constructors and destructors.
void addGpuRuntimeAbi(llvm::Module &module);

} // namespace mlir::recur

#endif // RECUR_LIB_TARGET_MODULEABI_H
