//===- Compile.cpp - ahead-of-time compilation of recur models ------------===//
//
// recur ops -> recur-lower-to-cpu or recur-lower-to-cuda -> LLVM IR, plus
// the runtime ABI (recur/runtime.h):
//
//   const char *recur_compiled_model_description(void); // JSON
//                                                       // (ModelDescription.h)
//   void recur_compiled_model_run(void **args);   // args[0]: the results'
//                                                 // descriptors, args[1..]:
//                                                 // the arguments'
//
// -> O3 -> object file -> shared library (linked by clang from LLVM 22).
//
//===----------------------------------------------------------------------===//

#include "recur/Target/Compile.h"

#include "recur/IR/RecurDialect.h"
#include "recur/InitAll.h"
#include "recur/Pipelines/Pipelines.h"
#include "recur/Target/ModelDescription.h"
#include "recur/runtime.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

LogicalResult fail(ModuleOp module, const Twine &message) {
  return module.emitError(message);
}

/// Exports `symbol(void **args)`, which calls the C wrapper of `function`
/// with args[0] (its results) and args[1..numArguments], and inlines the
/// function and its wrapper into it. Not exported themselves: a call that
/// passes every memref's fields (7 values for each of hundreds of weights)
/// is one basic block whose instruction selection is quadratic in the
/// number of layers.
void exportEntry(llvm::Module &module, StringRef function, StringRef symbol,
                 unsigned numArguments) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type *ptr = builder.getPtrTy();
  // One fixed signature for every model: the runtime cannot build a call with
  // a model-specific number of arguments.
  llvm::Function *wrapper =
      module.getFunction(("_mlir_ciface_" + function).str());
  assert(wrapper && "the pipelines request C wrappers");
  auto *exported = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, symbol, module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", exported));
  SmallVector<llvm::Value *> pointers;
  for (unsigned index = 0; index <= numArguments; ++index)
    pointers.push_back(builder.CreateLoad(
        ptr, builder.CreateConstGEP1_64(ptr, exported->getArg(0), index)));
  builder.CreateCall(wrapper->getFunctionType(), wrapper, pointers);
  builder.CreateRetVoid();
  for (llvm::Function *inlined : {wrapper, module.getFunction(function)}) {
    inlined->setLinkage(llvm::GlobalValue::InternalLinkage);
    inlined->addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

/// LLVM's -O3 pipeline, as mlir::makeOptimizingTransformer runs it, without
/// CalledValuePropagationPass: it attaches the possible callees to indirect
/// calls, which generated code does not make (OpenMP's microtasks are called
/// by the OpenMP runtime), and it tracks every pointer in the aggregates
/// that carry memref descriptors, so the weight prologue's result (three
/// descriptors per layer) made it quadratic in the layers: 10 of a
/// 200-layer stack's 13 s of optimization.
void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
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

/// Adds the runtime's entry points next to the lowered model: its
/// description, its run function and its weight prologue's (if any).
void addRuntimeAbi(llvm::Module &module, StringRef description,
                   unsigned numArguments, StringRef prologue,
                   unsigned numPrologueArguments) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type *ptr = builder.getPtrTy();

  auto *text = llvm::ConstantDataArray::getString(context, description);
  auto *global = new llvm::GlobalVariable(
      module, text->getType(), /*isConstant=*/true,
      llvm::GlobalValue::PrivateLinkage, text, "recur_model_description_json");
  auto *describe = llvm::Function::Create(
      llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
      RECUR_MODEL_DESCRIPTION_SYMBOL, module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", describe));
  builder.CreateRet(global);

  exportEntry(module, kModelEntryName, RECUR_MODEL_RUN_SYMBOL, numArguments);
  if (!prologue.empty())
    exportEntry(module, prologue, RECUR_MODEL_PREPARE_SYMBOL,
                numPrologueArguments);
}

/// The C library functions generated code manages its buffers with, in the
/// order of RECUR_MODEL_SET_HEAP_SYMBOL's parameters.
constexpr StringLiteral kHeapFunctions[] = {"malloc", "aligned_alloc", "free"};

/// Out of memory in generated code becomes an error value instead of a
/// write through a null pointer: every heap allocation of the entry function
/// (and of its weight prologue) is checked, and on failure the function
/// records the size (thread-local, as several models may run at once) and
/// returns at once, its results unset. The exported
/// RECUR_MODEL_FAILED_ALLOCATION_SYMBOL hands the size to the runtime and
/// clears it. Allocations and frees elsewhere (none today: the pipelines
/// allocate and free in the entries' serial code) are refused, so that none
/// goes unchecked or untracked (routeHeapThroughHooks).
LogicalResult checkAllocations(ModuleOp module, llvm::Module &llvmModule,
                               StringRef prologue) {
  llvm::LLVMContext &context = llvmModule.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type *i64 = builder.getInt64Ty();
  auto *failed = new llvm::GlobalVariable(
      llvmModule, i64, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      builder.getInt64(0), "recur_failed_allocation", nullptr,
      llvm::GlobalValue::GeneralDynamicTLSModel);

  SmallVector<llvm::Function *> entries = {
      llvmModule.getFunction(kModelEntryName)};
  if (!prologue.empty())
    entries.push_back(llvmModule.getFunction(prologue));
  SmallVector<llvm::CallInst *> allocations;
  for (StringRef name : kHeapFunctions) {
    llvm::Function *function = llvmModule.getFunction(name);
    if (!function)
      continue;
    for (llvm::User *user : function->users()) {
      auto *call = dyn_cast<llvm::CallInst>(user);
      // The runtime tracks a run's buffers per calling thread.
      if (!call || !llvm::is_contained(entries, call->getFunction()))
        return fail(module,
                    "internal error: a heap " +
                        Twine(name == "free" ? "release" : "allocation") +
                        " outside @" + Twine(kModelEntryName) +
                        " and its prologue cannot be tracked");
      if (name != "free")
        allocations.push_back(call);
    }
  }
  // One out-of-memory exit per function, reached with the size that failed:
  // a return block per allocation made LLVM's tail merging quadratic in the
  // number of layers.
  llvm::DenseMap<llvm::Function *, llvm::PHINode *> exits;
  auto exitOf = [&](llvm::Function *entry) {
    llvm::PHINode *&size = exits[entry];
    if (size)
      return size;
    auto *outOfMemory =
        llvm::BasicBlock::Create(context, "out_of_memory", entry);
    builder.SetInsertPoint(outOfMemory);
    size = builder.CreatePHI(i64, 0, "failed_size");
    // A request of 0 bytes still counts as one.
    builder.CreateStore(builder.CreateSelect(builder.CreateIsNull(size),
                                             builder.getInt64(1), size),
                        builder.CreateThreadLocalAddress(failed));
    if (entry->getReturnType()->isVoidTy())
      builder.CreateRetVoid();
    else
      builder.CreateRet(llvm::PoisonValue::get(entry->getReturnType()));
    return size;
  };
  for (llvm::CallInst *call : allocations) {
    llvm::PHINode *size = exitOf(call->getFunction());
    llvm::BasicBlock *before = call->getParent();
    llvm::BasicBlock *after =
        before->splitBasicBlock(call->getNextNode(), "allocated");
    before->getTerminator()->eraseFromParent();
    builder.SetInsertPoint(before);
    // The size is the last argument of both malloc and aligned_alloc.
    llvm::Value *requested = builder.CreateZExtOrTrunc(
        call->getArgOperand(call->arg_size() - 1), i64);
    builder.CreateCondBr(builder.CreateIsNull(call), size->getParent(), after);
    size->addIncoming(requested, before);
  }

  auto *report = llvm::Function::Create(
      llvm::FunctionType::get(i64, false), llvm::GlobalValue::ExternalLinkage,
      RECUR_MODEL_FAILED_ALLOCATION_SYMBOL, llvmModule);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", report));
  llvm::Value *address = builder.CreateThreadLocalAddress(failed);
  llvm::Value *bytes = builder.CreateLoad(i64, address);
  builder.CreateStore(builder.getInt64(0), address);
  builder.CreateRet(bytes);
  return success();
}

/// Every call to malloc, aligned_alloc and free in the model goes through a
/// function pointer, the C library's by default; the exported
/// RECUR_MODEL_SET_HEAP_SYMBOL replaces them, so that the runtime can track
/// the buffers of a run and free them when a later allocation fails.
void routeHeapThroughHooks(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type *ptr = builder.getPtrTy();
  auto *setHeap = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), {ptr, ptr, ptr}, false),
      llvm::GlobalValue::ExternalLinkage, RECUR_MODEL_SET_HEAP_SYMBOL, module);
  llvm::IRBuilder<> setBuilder(
      llvm::BasicBlock::Create(context, "entry", setHeap));
  for (auto [index, name] : llvm::enumerate(kHeapFunctions)) {
    llvm::Function *function = module.getFunction(name);
    if (!function)
      continue;
    auto *hook = new llvm::GlobalVariable(module, ptr, /*isConstant=*/false,
                                          llvm::GlobalValue::InternalLinkage,
                                          function, name + ".hook");
    setBuilder.CreateStore(setHeap->getArg(index), hook);
    SmallVector<llvm::CallInst *> calls;
    for (llvm::User *user : function->users())
      if (auto *call = dyn_cast<llvm::CallInst>(user);
          call && call->getCalledFunction() == function)
        calls.push_back(call);
    for (llvm::CallInst *call : calls) {
      builder.SetInsertPoint(call);
      call->setCalledOperand(builder.CreateLoad(ptr, hook, name + ".impl"));
      // What LLVM knows of the C library's allocators, it must still know
      // of the hooks: a new buffer aliases nothing.
      if (name != "free")
        call->addRetAttr(llvm::Attribute::NoAlias);
    }
  }
  setBuilder.CreateRetVoid();
}

/// Replaces a global constructor or destructor list (`llvm.global_ctors`,
/// `llvm.global_dtors`) with an exported function that calls its entries in
/// the order the loader would: constructors by ascending priority,
/// destructors by descending priority, ties in reverse.
void exportStructors(llvm::Module &module, StringRef listName,
                     StringRef functionName, bool destructors) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), false),
      llvm::GlobalValue::ExternalLinkage, functionName, module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  if (llvm::GlobalVariable *list = module.getGlobalVariable(listName)) {
    // (priority, position in the list): equal priorities keep list order.
    SmallVector<std::tuple<uint64_t, size_t, llvm::Function *>> entries;
    if (auto *array = dyn_cast<llvm::ConstantArray>(list->getInitializer()))
      for (llvm::Value *element : array->operands()) {
        auto *entry = cast<llvm::ConstantStruct>(element);
        // The GPU lowering registers plain functions; anything else is kept
        // out of the list rather than mis-called.
        auto *callee = dyn_cast<llvm::Function>(entry->getOperand(1));
        auto *priority = dyn_cast<llvm::ConstantInt>(entry->getOperand(0));
        if (callee && priority)
          entries.push_back({priority->getZExtValue(), entries.size(), callee});
      }
    llvm::sort(entries);
    if (destructors)
      std::reverse(entries.begin(), entries.end());
    for (auto &[priority, position, callee] : entries)
      builder.CreateCall(callee);
    list->eraseFromParent();
  }
  builder.CreateRetVoid();
}

/// Whether the runtime implements `function`, which the host code calls:
/// MLIR's `mgpu*` functions and the GEMM library call.
bool isGpuRuntimeFunction(const llvm::Function &function) {
  return function.isDeclaration() &&
         (function.getName().starts_with("mgpu") ||
          function.getName() == RECUR_GPU_MATMUL_SYMBOL);
}

/// Turns every runtime function the host code calls into an internal stub
/// that calls through a pointer, and exports the function that sets those
/// pointers. The model then needs no symbol from the process: it works
/// whether the runtime was loaded globally or not (e.g. by Python's ctypes).
void bindGpuRuntimeIndirectly(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type *ptr = builder.getPtrTy();
  auto *resolverType = llvm::FunctionType::get(ptr, {ptr}, false);
  auto *bind = llvm::Function::Create(
      llvm::FunctionType::get(builder.getInt32Ty(), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, RECUR_MODEL_BIND_GPU_SYMBOL, module);
  auto *bindBlock = llvm::BasicBlock::Create(context, "entry", bind);
  llvm::IRBuilder<> bindBuilder(bindBlock);
  llvm::Value *unresolved = bindBuilder.getInt32(0);

  SmallVector<llvm::Function *> runtimeFunctions;
  for (llvm::Function &function : module.functions())
    if (isGpuRuntimeFunction(function))
      runtimeFunctions.push_back(&function);
  for (llvm::Function *function : runtimeFunctions) {
    auto *pointer = new llvm::GlobalVariable(
        module, ptr, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0)),
        function->getName() + ".impl");
    function->setLinkage(llvm::GlobalValue::InternalLinkage);
    builder.SetInsertPoint(
        llvm::BasicBlock::Create(context, "entry", function));
    SmallVector<llvm::Value *> arguments;
    for (llvm::Argument &argument : function->args())
      arguments.push_back(&argument);
    llvm::CallInst *call =
        builder.CreateCall(function->getFunctionType(),
                           builder.CreateLoad(ptr, pointer), arguments);
    call->setAttributes(function->getAttributes());
    call->setCallingConv(function->getCallingConv());
    if (function->getReturnType()->isVoidTy())
      builder.CreateRetVoid();
    else
      builder.CreateRet(call);

    llvm::Value *resolved = bindBuilder.CreateCall(
        resolverType, bind->getArg(0),
        {bindBuilder.CreateGlobalString(function->getName())});
    bindBuilder.CreateStore(resolved, pointer);
    unresolved = bindBuilder.CreateAdd(
        unresolved, bindBuilder.CreateZExt(bindBuilder.CreateIsNull(resolved),
                                           bindBuilder.getInt32Ty()));
  }
  bindBuilder.CreateRet(unresolved);
}

/// The PTX of every kernel module, from a module lowered with format=isa.
std::string collectPtx(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      ptx += "// gpu.module @" + binary.getSymName().str() + "\n" +
             cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });
  return ptx;
}

/// The host target machine for `cpu`, or null with `error` set.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(StringRef cpu,
                                                         std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + error;
    return nullptr;
  }
  std::string cpuName = cpu.str(), features;
  // Checked before the target machine exists, which would warn about it.
  if (cpu != "native" && !std::unique_ptr<llvm::MCSubtargetInfo>(
                              target->createMCSubtargetInfo(triple, "", ""))
                              ->isCPUStringValid(cpuName)) {
    error = "unknown CPU '" + cpuName + "' for " + triple.str() +
            " (try --cpu=native or e.g. --cpu=x86-64-v3)";
    return nullptr;
  }
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    SmallVector<std::string> enabled;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      enabled.push_back((feature.second ? "+" : "-") + feature.first().str());
    features = llvm::join(enabled, ",");
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpuName)) {
    error = "unknown CPU '" + cpuName + "' for " + triple.str() +
            " (try --cpu=native or e.g. --cpu=x86-64-v3)";
    return nullptr;
  }
  return machine;
}

/// Whether `machine` has AVX512-BF16's dot products of bf16 pairs.
bool hasBf16DotProducts(const llvm::TargetMachine &machine) {
  return machine.getTargetTriple().isX86() &&
         machine.getMCSubtargetInfo()->checkFeatures("+avx512bf16");
}

/// The GEMM register tile for `machine`'s vector registers.
CpuGemmTile gemmTileFor(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo &subtarget = *machine.getMCSubtargetInfo();
  if (machine.getTargetTriple().isX86()) {
    if (subtarget.checkFeatures("+avx512f"))
      return CpuGemmTile::forTarget(16, 32);
    if (subtarget.checkFeatures("+avx"))
      return CpuGemmTile::forTarget(8, 16);
    return CpuGemmTile::forTarget(4, 16); // SSE2, in every x86-64
  }
  if (machine.getTargetTriple().isAArch64())
    return CpuGemmTile::forTarget(4, 32); // NEON
  return {};
}

LogicalResult writeFile(ModuleOp module, StringRef path,
                        function_ref<void(llvm::raw_pwrite_stream &)> write) {
  std::error_code code;
  llvm::ToolOutputFile output(path, code, llvm::sys::fs::OF_None);
  if (code)
    return fail(module, "cannot write '" + path + "': " + code.message());
  write(output.os());
  output.keep();
  return success();
}

LogicalResult emitObject(ModuleOp module, llvm::Module &llvmModule,
                         llvm::TargetMachine &machine, StringRef path) {
  return writeFile(module, path, [&](llvm::raw_pwrite_stream &os) {
    llvm::legacy::PassManager passes;
    machine.addPassesToEmitFile(passes, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile);
    passes.run(llvmModule);
  });
}

LogicalResult linkSharedLibrary(ModuleOp module, StringRef object,
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
    return fail(module, "linking '" + path + "' failed (" +
                            llvm::join(argRefs, " ") + ")" +
                            (error.empty() ? "" : ": " + error));
  return success();
}

} // namespace

/// defaultFusionLevel for a target whose host GEMM tile is known.
static FusionLevel defaultFusionLevelFor(bool cuda, const CpuGemmTile &tile) {
  // On the CPU the wavefront's fused step is still a scalar loop nest.
  return !cuda && tile.enabled() ? FusionLevel::cell : FusionLevel::all;
}

FusionLevel mlir::recur::defaultFusionLevel(const CompileOptions &options) {
  if (options.target != "cpu")
    return FusionLevel::all;
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options.cpu, error);
  return defaultFusionLevelFor(/*cuda=*/false,
                               machine ? gemmTileFor(*machine) : CpuGemmTile());
}

std::string mlir::recur::checkCompileOptions(const CompileOptions &options) {
  bool cuda = options.target == "cuda";
  if (options.target != "cpu" && !cuda && options.target != kCudaEmulatorTarget)
    return "unknown target '" + options.target +
           "'; expected cpu, cuda or cuda-emulator";
  if (options.emit == EmitKind::Ptx && !cuda)
    return "--emit=ptx needs --target=cuda";
  if (const std::optional<std::string> &precision = options.precision) {
    if (*precision != "fp32" && *precision != "tf32" && *precision != "bf16")
      return "unknown --precision '" + *precision +
             "'; expected fp32, tf32 or bf16";
    if (*precision == "tf32" && options.target == "cpu")
      return "--precision=tf32 needs --target=cuda or cuda-emulator (TF32 "
             "tensor cores); the CPU takes fp32 or bf16";
    if (*precision != "fp32" && !options.tiledGemms)
      return "--precision=" + *precision +
             " runs the GEMMs on tensor cores in the tiled kernels: drop "
             "--no-tiled-gemms";
  }
  if (options.gemm != "generated" && options.gemm != "cublaslt")
    return "unknown --gemm '" + options.gemm +
           "'; expected generated or cublaslt";
  if (options.gemm == "cublaslt" && !cuda)
    return "--gemm=cublaslt needs --target=cuda: cuBLASLt runs on the GPU "
           "(the CPU and the CUDA emulator run generated code)";
  if (cuda) {
    StringRef arch = options.cudaArch;
    unsigned number;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, number))
      return "--cuda-arch must name an SM architecture such as sm_90, not '" +
             options.cudaArch + "'";
    if (CudaPipelineOptions().toolkit.getValue().empty())
      return "--target=cuda needs the CUDA toolkit (ptxas, fatbinary, "
             "libdevice); none was found when Recur was built";
  }
  std::string error;
  if (!createTargetMachine(options.cpu, error))
    return error;
  return "";
}

LogicalResult mlir::recur::compileModel(ModuleOp module,
                                        const CompileOptions &options,
                                        StringRef outputPath) {
  bool cuda = options.target == "cuda";
  // The CUDA pipeline's kernels, run on the CPU: a CPU model.
  bool emulator = options.target == kCudaEmulatorTarget;
  if (std::string error = checkCompileOptions(options); !error.empty())
    return fail(module, error);
  // A module built by a library user's context may lack the interfaces that
  // bufferization and translation need.
  DialectRegistry registry;
  registerCompilerDialects(registry);
  module.getContext()->appendDialectRegistry(registry);

  auto entry = module.lookupSymbol<func::FuncOp>(kModelEntryName);
  if (!entry)
    return fail(module, Twine("no function @") + kModelEntryName +
                            " to compile; recur-gen writes one");

  // The model as written is described (its reference program included);
  // what fusion adds (tensors derived from weights, their prologue) is
  // described from the fused entry.
  auto unfused = cast<func::FuncOp>(entry->clone());
  llvm::scope_exit eraseUnfused([&] { unfused->erase(); });
  std::string hostError; // checked above
  std::unique_ptr<llvm::TargetMachine> host =
      createTargetMachine(options.cpu, hostError);
  // The GPU runs every kernel; host code has no GEMM.
  CpuGemmTile gemmTile =
      cuda || emulator || !host ? CpuGemmTile() : gemmTileFor(*host);
  FusionLevel level = options.fusion.value_or(
      defaultFusionLevelFor(cuda || emulator, gemmTile));
  // A bf16 model's GEMMs take bf16 operands by default, as PyTorch's do.
  bool bf16Model = llvm::any_of(
      llvm::concat<const Type>(unfused.getArgumentTypes(),
                               unfused.getResultTypes()),
      [](Type type) { return getElementTypeOrSelf(type).isBF16(); });
  // The CPU's bf16 products are those of its vector GEMM kernels, on the
  // weights that fusion packs.
  bool cpuKernels =
      !cuda && !emulator && gemmTile.enabled() && level > FusionLevel::none;
  // AVX512-BF16 matters to a bf16 model only (dot products, conversions).
  bool bf16Dot =
      bf16Model && !cuda && !emulator && host && hasBf16DotProducts(*host);
  std::string precision = options.precision.value_or(
      bf16Model && (((cuda || emulator) && options.tiledGemms) ||
                    (cpuKernels && bf16Dot))
          ? "bf16"
          : "fp32");
  if (precision == "bf16" && !bf16Model)
    return fail(module, Twine("--precision=bf16 needs a bf16 model (recur-gen "
                              "--dtype bf16); an f32 model takes fp32") +
                            (cuda || emulator ? " or tf32" : ""));
  if (precision == "bf16" && !cuda && !emulator && !cpuKernels)
    return fail(module, "--precision=bf16 on the CPU runs the vector GEMM "
                        "kernels' products in bf16: it needs --fusion above "
                        "none and a CPU with vector registers");

  PassManager fusion(module.getContext());
  buildFusionPipeline(fusion, level, gemmTile,
                      precision == "bf16" && cpuKernels);
  if (failed(fusion.run(module)))
    return failure();

  PassManager pm(module.getContext());
  std::string pipeline;
  bool openmp = options.openmp && !cuda;
  if (cuda || emulator) {
    CudaPipelineOptions cudaOptions;
    cudaOptions.fusion = level;
    cudaOptions.chip = options.cudaArch;
    cudaOptions.persistent = options.persistentKernels;
    cudaOptions.tiledGemms = options.tiledGemms;
    cudaOptions.stationaryWeights = options.stationaryWeights;
    cudaOptions.precision = precision;
    if (options.gemm == "cublaslt")
      cudaOptions.gemm = GemmLowering::cublaslt;
    auto flag = [](bool value) {
      return std::string(value ? "true" : "false");
    };
    std::string kernels =
        " persistent=" + flag(options.persistentKernels) +
        " tiled-gemms=" + flag(options.tiledGemms) +
        " stationary-weights=" + flag(options.stationaryWeights) +
        " precision=" + precision;
    if (emulator) {
      buildCudaEmulatorBackEndPipeline(pm, cudaOptions);
      pipeline = "recur-lower-to-cuda-emulator{fusion=" +
                 stringifyFusionLevel(level).str() + kernels + "}";
    } else {
      if (options.emit == EmitKind::Ptx)
        cudaOptions.format = "isa";
      buildCudaBackEndPipeline(pm, cudaOptions);
      pipeline =
          "recur-lower-to-cuda{fusion=" + stringifyFusionLevel(level).str() +
          " chip=" + options.cudaArch + kernels + " gemm=" + options.gemm +
          " format=" + cudaOptions.format.getValue() + "}";
    }
  } else {
    CpuPipelineOptions cpuOptions;
    cpuOptions.fusion = level;
    cpuOptions.openmp = openmp;
    cpuOptions.vectorWidth = gemmTile.vectorWidth;
    cpuOptions.vectorRegisters = gemmTile.vectorRegisters;
    cpuOptions.precision = precision;
    cpuOptions.bf16Dot = bf16Dot;
    buildCpuBackEndPipeline(pm, cpuOptions);
    pipeline =
        "recur-lower-to-cpu{fusion=" + stringifyFusionLevel(level).str() +
        " openmp=" + std::string(openmp ? "true" : "false") +
        " vector-width=" + std::to_string(gemmTile.vectorWidth) +
        " vector-registers=" + std::to_string(gemmTile.vectorRegisters) +
        " precision=" + precision + (bf16Dot ? " bf16-dot=true" : "") + "}";
  }
  FailureOr<std::string> description = describeModel(
      unfused, entry, emulator ? "cpu" : options.target, pipeline,
      stringifyFusionLevel(level), precision, cuda ? options.cudaArch : "");
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
            RecurDialect::kDerivedAttrName})
        function.removeArgAttr(index, name);
    for (unsigned index = 0; index < function.getNumResults(); ++index)
      for (StringRef name :
           {RecurDialect::kOutputAttrName, RecurDialect::kDerivedAttrName})
        function.removeResultAttr(index,
                                  StringAttr::get(function.getContext(), name));
  });
  if (options.emit == EmitKind::Mlir)
    return writeFile(module, outputPath,
                     [&](llvm::raw_pwrite_stream &os) { module.print(os); });
  if (options.emit == EmitKind::Ptx)
    return writeFile(module, outputPath, [&](llvm::raw_pwrite_stream &os) {
      os << collectPtx(module);
    });

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "recur_model");
  if (!llvmModule)
    return fail(module, "translation to LLVM IR failed");
  addRuntimeAbi(*llvmModule, *description, numArguments, prologue,
                numPrologueArguments);
  if (!cuda) {
    if (failed(checkAllocations(module, *llvmModule, prologue)))
      return failure();
    routeHeapThroughHooks(*llvmModule);
  }
  if (cuda) {
    exportStructors(*llvmModule, "llvm.global_ctors",
                    RECUR_MODEL_GPU_INIT_SYMBOL, /*destructors=*/false);
    exportStructors(*llvmModule, "llvm.global_dtors",
                    RECUR_MODEL_GPU_FINI_SYMBOL, /*destructors=*/true);
    bindGpuRuntimeIndirectly(*llvmModule);
  }

  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options.cpu, error);
  if (!machine)
    return fail(module, error);
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  optimize(*llvmModule, *machine);
  if (options.emit == EmitKind::LlvmIr)
    return writeFile(module, outputPath, [&](llvm::raw_pwrite_stream &os) {
      llvmModule->print(os, nullptr);
    });
  if (options.emit == EmitKind::Object)
    return emitObject(module, *llvmModule, *machine, outputPath);

  SmallString<128> object;
  if (std::error_code code =
          llvm::sys::fs::createTemporaryFile("recur-model", "o", object))
    return fail(module,
                "cannot create a temporary object file: " + code.message());
  llvm::FileRemover removeObject(object);
  if (failed(emitObject(module, *llvmModule, *machine, object)))
    return failure();
  return linkSharedLibrary(module, object, outputPath, openmp);
}
