//===- OutlineParallelLoops.cpp - one function per outermost parallel loop ===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::recur {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// The outlined functions so far, by a hash of their bodies' ops (names,
/// attributes, types; not locations or which values they use): a stack's
/// layers of one shape give the same loops, which are compiled once.
class OutlinedFunctions {
public:
  /// An outlined function with `function`'s type and an equivalent body,
  /// or null; otherwise `function` is remembered as one.
  func::FuncOp findOrAdd(func::FuncOp function) {
    llvm::hash_code hash = hash_value(function.getFunctionType());
    function.getBody().walk([&](Operation *op) {
      hash = llvm::hash_combine(hash,
                                OperationEquivalence::computeHash(
                                    op, OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::IgnoreLocations));
    });
    SmallVector<func::FuncOp, 1> &candidates =
        byHash[static_cast<size_t>(hash)];
    for (func::FuncOp candidate : candidates)
      if (candidate.getFunctionType() == function.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(
              &candidate.getBody(), &function.getBody(),
              OperationEquivalence::IgnoreLocations))
        return candidate;
    candidates.push_back(function);
    return {};
  }

private:
  llvm::DenseMap<size_t, SmallVector<func::FuncOp, 1>> byHash;
};

/// Moves `loop` (an scf.parallel, or an omp.parallel team around a serial
/// loop) into a new private function next to `parent` and calls it in its
/// place, or calls an equivalent function outlined before. Values the loop
/// uses from above become arguments, except constants, which are cloned so
/// the function's bounds stay static.
void outline(Operation *loop, func::FuncOp parent, SymbolTable &symbols,
             OutlinedFunctions &outlined) {
  llvm::SetVector<Value> used;
  for (Value operand : loop->getOperands())
    used.insert(operand);
  getUsedValuesDefinedAbove(loop->getRegions(), used);
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : used) {
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      arguments.push_back(value);
  }

  OpBuilder builder(parent);
  builder.setInsertionPointAfter(parent);
  Location loc = loop->getLoc();
  auto function = func::FuncOp::create(
      builder, loc, (parent.getSymName() + "_parallel").str(),
      builder.getFunctionType(ValueRange(arguments).getTypes(),
                              loop->getResultTypes()));
  function.setPrivate();
  // Kept apart in LLVM too: one function holding every layer's loops makes
  // LLVM's optimizer and code generator superlinear in the number of layers.
  // (func-to-llvm carries `passthrough` and `llvm.linkage` over.)
  function->setAttr("passthrough",
                    builder.getArrayAttr({builder.getStringAttr("noinline")}));
  function->setAttr(
      "llvm.linkage",
      LLVM::LinkageAttr::get(builder.getContext(), LLVM::Linkage::Internal));
  Block *body = function.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  builder.setInsertionPointToEnd(body);
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  Operation *clone = builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loc, clone->getResults());
  if (func::FuncOp existing = outlined.findOrAdd(function)) {
    function.erase();
    function = existing;
  } else {
    symbols.insert(function); // renamed if the name is taken
  }

  builder.setInsertionPoint(loop);
  auto call = func::CallOp::create(builder, loc, function, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
}

struct OutlineParallelLoopsPass
    : mlir::recur::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, func::FuncOp>> loops;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Outermost parallel regions only, in a function's body or its serial
      // loops; nested ones go with them.
      if (!isa<scf::ParallelOp, omp::ParallelOp>(op))
        return WalkResult::advance();
      if (auto function = op->getParentOfType<func::FuncOp>())
        loops.push_back({op, function});
      return WalkResult::skip();
    });
    SymbolTable symbols(module);
    OutlinedFunctions outlined;
    for (auto [loop, parent] : loops)
      outline(loop, parent, symbols, outlined);
  }
};

} // namespace
