//===- Compile.cpp - ahead-of-time compilation of recur models ------------===//
//
// recur ops -> recur-lower-to-cpu or recur-lower-to-cuda (TargetConfig) ->
// LLVM IR, plus the runtime ABI (ModuleAbi.h) -> O3 -> object file -> shared
// library (Link.h).
//
//===----------------------------------------------------------------------===//

#include "recur/Target/Compile.h"

#include "Link.h"
#include "ModuleAbi.h"
#include "recur/IR/RecurDialect.h"
#include "recur/InitAll.h"
#include "recur/Target/ModelDescription.h"
#include "recur/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"

using namespace mlir;
using namespace mlir::recur;

FailureOr<TargetConfig> mlir::recur::compileModel(ModuleOp module,
                                                  const CompileOptions &options,
                                                  StringRef outputPath) {
  if (std::string error = checkCompileOptions(options); !error.empty())
    return module.emitError(error);
  // A module built by a library user's context may lack the interfaces that
  // bufferization and translation need.
  DialectRegistry registry;
  registerCompilerDialects(registry);
  module.getContext()->appendDialectRegistry(registry);

  auto entry = module.lookupSymbol<func::FuncOp>(kModelEntryName);
  if (!entry)
    return module.emitError(Twine("no function @") + kModelEntryName +
                            " to compile; recur-gen writes one");

  // Specialized first, so that the description gives the sizes the model
  // takes (the fusion pipeline's specialization then finds them fixed).
  if (!options.inputShapes.empty()) {
    PassManager specialize(module.getContext());
    SpecializeShapesOptions shapes;
    shapes.inputs = llvm::to_vector(options.inputShapes);
    specialize.addPass(createSpecializeShapes(shapes));
    if (failed(specialize.run(module)))
      return failure();
  }

  // A vector-Jacobian product is described with its own signature (the
  // gradients it takes and returns), so it is derived first.
  if (entry->hasAttr(RecurDialect::kVjpAttrName) ||
      entry->hasAttr(RecurDialect::kKeepActivationsAttrName)) {
    PassManager differentiate(module.getContext());
    differentiate.addNestedPass<func::FuncOp>(createDifferentiate());
    if (failed(differentiate.run(module)))
      return failure();
  }

  // The model as written is described (its reference program included);
  // what fusion adds (tensors derived from weights, their prologue) is
  // described from the fused entry.
  auto unfused = cast<func::FuncOp>(entry->clone());
  llvm::scope_exit eraseUnfused([&] { unfused->erase(); });
  std::string error;
  std::unique_ptr<llvm::TargetMachine> host =
      createHostMachine(options.cpu, error);
  if (!host)
    return module.emitError(error);
  bool bf16Model = llvm::any_of(
      llvm::concat<const Type>(unfused.getArgumentTypes(),
                               unfused.getResultTypes()),
      [](Type type) { return getElementTypeOrSelf(type).isBF16(); });
  llvm::Expected<TargetConfig> resolved =
      TargetConfig::resolve(options, bf16Model, *host);
  if (!resolved)
    return module.emitError(llvm::toString(resolved.takeError()));
  const TargetConfig &config = *resolved;

  PassManager fusion(module.getContext());
  config.buildFusionPipeline(fusion);
  if (failed(fusion.run(module)))
    return failure();
  PassManager pm(module.getContext());
  config.buildBackEndPipeline(pm);
  FailureOr<std::string> description = describeModel(
      unfused, entry, config.describedTarget(), config.pipeline(),
      stringifyFusionLevel(config.fusion), stringifyPrecision(config.precision),
      config.target == Target::cuda ? config.cudaArch : "");
  if (failed(description))
    return failure();
  unsigned numArguments = entry.getNumArguments();
  std::string prologue;
  unsigned numPrologueArguments = 0;
  if (auto reference = entry->getAttrOfType<FlatSymbolRefAttr>(
          RecurDialect::kPrologueAttrName)) {
    prologue = reference.getValue().str();
    numPrologueArguments =
        module.lookupSymbol<func::FuncOp>(reference).getNumArguments();
    entry->removeAttr(RecurDialect::kPrologueAttrName);
  }

  if (failed(pm.run(module)))
    return failure();
  // The names are in the description now; LLVM would warn about them. (They
  // must stay until bufferization, which keeps named arguments read-only.)
  module.walk([](FunctionOpInterface function) {
    for (unsigned index = 0; index < function.getNumArguments(); ++index)
      for (StringRef name :
           {RecurDialect::kInputAttrName, RecurDialect::kWeightAttrName,
            RecurDialect::kDerivedAttrName, RecurDialect::kDimsAttrName})
        function.removeArgAttr(index, name);
    for (unsigned index = 0; index < function.getNumResults(); ++index)
      for (StringRef name :
           {RecurDialect::kOutputAttrName, RecurDialect::kDerivedAttrName,
            RecurDialect::kDimsAttrName})
        function.removeResultAttr(index,
                                  StringAttr::get(function.getContext(), name));
  });
  auto written = [&](LogicalResult result) -> FailureOr<TargetConfig> {
    if (failed(result))
      return failure();
    return config;
  };
  if (options.emit == EmitKind::Mlir)
    return written(
        writeFile(module, outputPath,
                  [&](llvm::raw_pwrite_stream &os) { module.print(os); }));
  if (options.emit == EmitKind::Ptx)
    return written(
        writeFile(module, outputPath, [&](llvm::raw_pwrite_stream &os) {
          os << collectPtx(module);
        }));

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "recur_model");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  addRuntimeAbi(*llvmModule, *description, numArguments, prologue,
                numPrologueArguments);
  if (config.target == Target::cuda)
    addGpuRuntimeAbi(*llvmModule);
  else if (failed(addCheckedHeap(module, *llvmModule, prologue)))
    return failure();

  llvmModule->setTargetTriple(host->getTargetTriple());
  llvmModule->setDataLayout(host->createDataLayout());
  optimize(*llvmModule, *host);
  if (options.emit == EmitKind::LlvmIr)
    return written(
        writeFile(module, outputPath, [&](llvm::raw_pwrite_stream &os) {
          llvmModule->print(os, nullptr);
        }));
  if (options.emit == EmitKind::Object)
    return written(emitObject(module, *llvmModule, *host, outputPath));

  SmallString<128> object;
  if (std::error_code code =
          llvm::sys::fs::createTemporaryFile("recur-model", "o", object))
    return module.emitError("cannot create a temporary object file: " +
                            code.message());
  llvm::FileRemover removeObject(object);
  if (failed(emitObject(module, *llvmModule, *host, object)))
    return failure();
  return written(linkSharedLibrary(module, object, outputPath, config.openmp));
}
