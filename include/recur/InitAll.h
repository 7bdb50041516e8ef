//===- InitAll.h - Register Recur's dialects and passes ---------*- C++ -*-===//

#ifndef RECUR_INITALL_H
#define RECUR_INITALL_H

namespace mlir {
class DialectRegistry;
namespace recur {

/// The recur dialect and every dialect its pipelines produce.
void registerRecurDialects(DialectRegistry &registry);

/// Everything a Recur tool may meet between recur IR and LLVM IR: all
/// upstream dialects, their extensions and LLVM IR translations, and recur's.
void registerCompilerDialects(DialectRegistry &registry);
/// Recur's passes (`recur-*`, `convert-recur-to-linalg`) and pipelines.
void registerRecurPasses();

} // namespace recur
} // namespace mlir

#endif // RECUR_INITALL_H
