//===- ModuleAbi.cpp - the runtime's entry points in a model --------------===//

#include "ModuleAbi.h"

#include "recur/Target/ModelDescription.h"
#include "recur/runtime.h"

#include "llvm/IR/IRBuilder.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

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
        return module.emitError(
            "internal error: a heap " +
            Twine(name == "free" ? "release" : "allocation") + " outside @" +
            Twine(kModelEntryName) + " and its prologue cannot be tracked");
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

} // namespace

void mlir::recur::addRuntimeAbi(llvm::Module &module, StringRef description,
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

LogicalResult mlir::recur::addCheckedHeap(ModuleOp module,
                                          llvm::Module &llvmModule,
                                          StringRef prologue) {
  if (failed(checkAllocations(module, llvmModule, prologue)))
    return failure();
  routeHeapThroughHooks(llvmModule);
  return success();
}

void mlir::recur::addGpuRuntimeAbi(llvm::Module &module) {
  exportStructors(module, "llvm.global_ctors", RECUR_MODEL_GPU_INIT_SYMBOL,
                  /*destructors=*/false);
  exportStructors(module, "llvm.global_dtors", RECUR_MODEL_GPU_FINI_SYMBOL,
                  /*destructors=*/true);
  bindGpuRuntimeIndirectly(module);
}
