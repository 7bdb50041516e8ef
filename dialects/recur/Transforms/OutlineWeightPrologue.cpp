//===- OutlineWeightPrologue.cpp - weight-only work, once per binding -----===//
//
// What an entry computes from its weights alone (the sum of an LSTM's two
// biases, a gate-interleaved w_hh, ...) does not change from run to run. It
// moves into a prologue function that the runtime runs once per weight
// binding; the entry takes its results as `recur.derived` arguments.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::recur {
#define GEN_PASS_DEF_OUTLINEWEIGHTPROLOGUE
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

bool isConstant(Operation *op) { return op->hasTrait<OpTrait::ConstantLike>(); }

void outlinePrologue(func::FuncOp entry, SymbolTable &symbols) {
  if (entry.isExternal() || entry->hasAttr(RecurDialect::kPrologueAttrName))
    return;
  Block &body = entry.getBody().front();
  // Values that depend on weights and constants only, with a readable name
  // for each: the weight's, or what was computed from which.
  llvm::DenseMap<Value, std::string> names;
  llvm::SmallVector<BlockArgument> weights;
  for (BlockArgument argument : entry.getArguments())
    if (auto name = entry.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), RecurDialect::kWeightAttrName)) {
      names[argument] = name.getValue().str();
      weights.push_back(argument);
    }
  llvm::SetVector<Operation *> prologue;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() == 0 || !isPrologueOp(&op))
      continue;
    if (isConstant(&op)) {
      for (Value result : op.getResults())
        names[result] = "constant";
      continue;
    }
    if (!llvm::all_of(op.getOperands(),
                      [&](Value operand) { return names.count(operand); }))
      continue;
    std::string name = op.getName().stripDialect().str() + "(";
    for (auto [index, operand] : llvm::enumerate(op.getOperands()))
      name += (index ? ", " : "") + names[operand];
    name += ")";
    for (OpResult result : op.getResults())
      names[result] =
          op.getNumResults() == 1
              ? name
              : name + "#" + std::to_string(result.getResultNumber());
    prologue.insert(&op);
  }

  // What the rest of the entry reads from the prologue.
  llvm::SetVector<Value> derived;
  for (Operation *op : prologue)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !prologue.contains(user);
          }))
        derived.insert(result);
  if (derived.empty())
    return;

  // The prologue takes the weights it reads, in the entry's order.
  llvm::SetVector<Value> read;
  for (Operation *op : prologue)
    for (Value operand : op->getOperands())
      read.insert(operand);
  SmallVector<BlockArgument> arguments;
  for (BlockArgument weight : weights)
    if (read.contains(weight))
      arguments.push_back(weight);

  OpBuilder builder(entry);
  builder.setInsertionPointAfter(entry);
  Location loc = entry.getLoc();
  SmallVector<Type> argumentTypes, resultTypes;
  for (BlockArgument argument : arguments)
    argumentTypes.push_back(argument.getType());
  for (Value value : derived)
    resultTypes.push_back(value.getType());
  auto function = func::FuncOp::create(
      builder, loc, (entry.getSymName() + "_prepare").str(),
      builder.getFunctionType(argumentTypes, resultTypes));
  symbols.insert(function);
  Block *prologueBody = function.addEntryBlock();
  IRMapping mapping;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    mapping.map(argument, prologueBody->getArgument(index));
    function.setArgAttr(index, RecurDialect::kWeightAttrName,
                        entry.getArgAttr(argument.getArgNumber(),
                                         RecurDialect::kWeightAttrName));
  }
  builder.setInsertionPointToEnd(prologueBody);
  for (Operation *op : prologue)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && isConstant(def) && !mapping.contains(operand))
        builder.clone(*def, mapping);
  for (Operation *op : prologue)
    builder.clone(*op, mapping);
  SmallVector<Value> results;
  for (Value value : derived)
    results.push_back(mapping.lookup(value));
  func::ReturnOp::create(builder, loc, results);

  // The entry reads them as arguments instead, named uniquely.
  llvm::StringSet<> used;
  for (auto [index, derivedValue] : llvm::enumerate(derived)) {
    Value value = derivedValue;
    std::string name = names[value];
    for (int copy = 2; !used.insert(name).second; ++copy)
      name = names[value] + "#" + std::to_string(copy);
    auto nameAttr = builder.getStringAttr(name);
    function.setResultAttr(index, RecurDialect::kDerivedAttrName, nameAttr);
    unsigned position = entry.getNumArguments();
    if (failed(
            entry.insertArgument(position, value.getType(),
                                 builder.getDictionaryAttr(builder.getNamedAttr(
                                     RecurDialect::kDerivedAttrName, nameAttr)),
                                 value.getLoc())))
      llvm_unreachable("a func.func takes any argument");
    value.replaceUsesWithIf(entry.getArgument(position), [&](OpOperand &use) {
      return !prologue.contains(use.getOwner());
    });
  }
  for (Operation *op : llvm::reverse(prologue))
    op->erase();
  entry->setAttr(RecurDialect::kPrologueAttrName,
                 FlatSymbolRefAttr::get(function.getSymNameAttr()));
}

struct OutlineWeightProloguePass
    : mlir::recur::impl::OutlineWeightPrologueBase<OutlineWeightProloguePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (!llvm::any_of(llvm::seq(function.getNumArguments()),
                        [&](unsigned index) {
                          return function.getArgAttr(
                              index, RecurDialect::kWeightAttrName);
                        }))
        continue;
      if (RecurDialect::isInTrainingStep(function)) {
        remarkMissed(function, getArgument(),
                     "what is computed from the weights alone (bias sums, "
                     "gate interleaving, packing) runs at every step",
                     "a training step updates its weights");
        continue;
      }
      entries.push_back(function);
    }
    for (func::FuncOp entry : entries)
      outlinePrologue(entry, symbols);
  }
};

} // namespace
