//===- Link.cpp - LLVM IR to an object and a shared library ---------------===//

#include "Link.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::recur;

// As mlir::makeOptimizingTransformer runs -O3, without
// CalledValuePropagationPass: it attaches the possible callees to indirect
// calls, which generated code does not make (OpenMP's microtasks are called
// by the OpenMP runtime), and it tracks every pointer in the aggregates
// that carry memref descriptors, so the weight prologue's result (three
// descriptors per layer) made it quadratic in the layers: 10 of a
// 200-layer stack's 13 s of optimization.
void mlir::recur::optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = tuning.LoopInterleaving = true;
  tuning.LoopVectorization = tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, modules);
}

LogicalResult
mlir::recur::writeFile(ModuleOp module, StringRef path,
                       function_ref<void(llvm::raw_pwrite_stream &)> write) {
  std::error_code code;
  llvm::ToolOutputFile output(path, code, llvm::sys::fs::OF_None);
  if (code)
    return module.emitError("cannot write '" + path + "': " + code.message());
  write(output.os());
  output.keep();
  return success();
}

LogicalResult mlir::recur::emitObject(ModuleOp module, llvm::Module &llvmModule,
                                      llvm::TargetMachine &machine,
                                      StringRef path) {
  return writeFile(module, path, [&](llvm::raw_pwrite_stream &os) {
    llvm::legacy::PassManager passes;
    machine.addPassesToEmitFile(passes, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile);
    passes.run(llvmModule);
  });
}

LogicalResult mlir::recur::linkSharedLibrary(ModuleOp module, StringRef object,
                                             StringRef path, bool openmp) {
  // A CUDA model links nothing from CUDA: the runtime binds its mgpu* calls.
  SmallVector<std::string> args = {RECUR_CLANG, "-shared",  "-fuse-ld=lld",
                                   "-o",        path.str(), object.str(),
                                   "-lm"};
  if (openmp) {
    // Found at run time through the rpath, so loading needs no environment.
    args.push_back("-L" RECUR_OPENMP_LIB_DIR);
    args.push_back("-Wl,-rpath," RECUR_OPENMP_LIB_DIR);
    args.push_back("-lomp");
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status = llvm::sys::ExecuteAndWait(RECUR_CLANG, argRefs, std::nullopt, {},
                                         0, 0, &error);
  if (status != 0)
    return module.emitError("linking '" + path + "' failed (" +
                            llvm::join(argRefs, " ") + ")" +
                            (error.empty() ? "" : ": " + error));
  return success();
}

std::string mlir::recur::collectPtx(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      ptx += "// gpu.module @" + binary.getSymName().str() + "\n" +
             cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });
  return ptx;
}
