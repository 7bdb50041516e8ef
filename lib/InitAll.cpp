//===- InitAll.cpp - Register Recur's dialects and passes -----------------===//

#include "recur/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "recur/IR/RecurOps.h"
#include "recur/Pipelines/Pipelines.h"
#include "recur/Codegen/Passes.h"
#include "recur/Conversion/Passes.h"
#include "recur/Transforms/Passes.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
// libMLIR is not instrumented. Our instrumented copies of LLVM's header-only
// BumpPtrAllocator poison each new slab, and libMLIR's copies then allocate
// from it without unpoisoning: reading such an attribute is reported as a
// use-after-poison that is not one. Every tool that links the compiler turns
// manual poisoning off (as lit does); real heap errors are still found.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
#endif
#endif

void mlir::recur::registerRecurDialects(DialectRegistry &registry) {
  registry.insert<RecurDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
}

void mlir::recur::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  // Bufferization, the GPU targets (NVVM serialization) and the translation
  // to LLVM IR work through interfaces registered as extensions.
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerRecurDialects(registry);
}

void mlir::recur::registerRecurPasses() {
  registerRecurTransformsPasses();
  registerRecurConversionPasses();
  registerRecurCodegenPasses();
  registerRecurPipelines();
}
