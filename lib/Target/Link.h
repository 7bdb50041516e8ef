//===- Link.h - LLVM IR to an object and a shared library -------*- C++ -*-===//

#ifndef RECUR_LIB_TARGET_LINK_H
#define RECUR_LIB_TARGET_LINK_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace mlir::recur {

/// LLVM's -O3 pipeline on `module` for `machine`.
void optimize(llvm::Module &module, llvm::TargetMachine &machine);

/// Writes `path` with `write`; a file that cannot be written is an error on
/// `module`.
LogicalResult writeFile(ModuleOp module, StringRef path,
                        function_ref<void(llvm::raw_pwrite_stream &)> write);

/// The object file of `llvmModule` for `machine`, at `path`.
LogicalResult emitObject(ModuleOp module, llvm::Module &llvmModule,
                         llvm::TargetMachine &machine, StringRef path);

/// Links `object` into the shared library `path` (with libomp when
/// `openmp`), with LLVM 22's clang and lld.
LogicalResult linkSharedLibrary(ModuleOp module, StringRef object,
                                StringRef path, bool openmp);

/// The PTX of every kernel module, from a module lowered with format=isa.
std::string collectPtx(ModuleOp module);

} // namespace mlir::recur

#endif // RECUR_LIB_TARGET_LINK_H
