//===- ModelDescription.cpp - what a compiled model expects ---------------===//

#include "recur/Target/ModelDescription.h"

#include "recur/IR/RecurOps.h"
#include "recur/runtime.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::recur;

static FailureOr<std::string> dtypeName(Type type) {
  if (type.isF32())
    return std::string("f32");
  if (type.isF16())
    return std::string("f16");
  if (type.isBF16())
    return std::string("bf16");
  if (type.isF64())
    return std::string("f64");
  if (type.isSignlessInteger(64))
    return std::string("i64");
  if (type.isSignlessInteger(32))
    return std::string("i32");
  return failure();
}

/// Integer inputs used as indices must lie in [0, bound); returns the bound.
static std::optional<int64_t> indexBound(Value argument) {
  for (OpOperand &use : argument.getUses()) {
    if (auto embedding = dyn_cast<EmbeddingOp>(use.getOwner());
        embedding && use.get() == embedding.getIds())
      return cast<ShapedType>(embedding.getTable().getType()).getShape()[0];
    if (auto loss = dyn_cast<CrossEntropyOp>(use.getOwner());
        loss && use.get() == loss.getTargets())
      return cast<ShapedType>(loss.getLogits().getType()).getShape().back();
  }
  return std::nullopt;
}

/// The batch-major tensors among the recur operands: initial LSTM states are
/// [B, H]; everything else that is dynamic is time-major [T, B, ...].
static bool isBatchMajor(Value argument) {
  return llvm::any_of(argument.getUses(), [](OpOperand &use) {
    auto lstm = dyn_cast<LSTMOp>(use.getOwner());
    return lstm && (use.get() == lstm.getH0() || use.get() == lstm.getC0());
  });
}

/// {"name", "dtype", "shape", "dims"} of one tensor; `what` names it in errors.
static FailureOr<llvm::json::Object>
describeTensor(func::FuncOp entry, const std::string &what, StringRef name,
               Type type, bool dynamicAllowed, bool batchMajor = false) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return entry.emitError() << what << " must be a ranked tensor, got " << type;
  FailureOr<std::string> dtype = dtypeName(tensor.getElementType());
  if (failed(dtype))
    return entry.emitError() << what << " has element type "
                             << tensor.getElementType()
                             << ", which the runtime cannot exchange";
  llvm::json::Array shape, dims;
  for (auto [index, size] : llvm::enumerate(tensor.getShape())) {
    shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    if (!ShapedType::isDynamic(size)) {
      dims.push_back(nullptr);
      continue;
    }
    if (!dynamicAllowed)
      return entry.emitError()
             << what << " must have a static shape, got " << type;
    if (batchMajor) {
      if (index > 0)
        return entry.emitError()
               << what << " has a dynamic dimension " << index
               << "; only dimension 0 (B) of an initial state may be dynamic";
      dims.push_back("B");
      continue;
    }
    if (index > 1)
      return entry.emitError()
             << what << " has a dynamic dimension " << index
             << "; only dimensions 0 (T) and 1 (B) may be dynamic";
    dims.push_back(index == 0 ? "T" : "B");
  }
  return llvm::json::Object{{"name", name},
                            {"dtype", *dtype},
                            {"shape", std::move(shape)},
                            {"dims", std::move(dims)}};
}

/// The entry's recur ops as a small JSON graph that `recur-run --check`
/// interprets with the reference library. Values are argument names or `%N`
/// (the N-th op result). Returns nullopt when the body holds ops the reference
/// does not know; the model then simply has no "program".
static std::optional<llvm::json::Object> describeProgram(func::FuncOp entry) {
  llvm::DenseMap<Value, std::string> names;
  for (BlockArgument argument : entry.getArguments()) {
    unsigned index = argument.getArgNumber();
    for (StringRef attr :
         {RecurDialect::kInputAttrName, RecurDialect::kWeightAttrName})
      if (auto name = entry.getArgAttrOfType<StringAttr>(index, attr))
        names[argument] = name.getValue().str();
  }
  auto nameOf = [&](Value value) -> llvm::json::Value {
    if (!value)
      return nullptr;
    return names.lookup(value);
  };
  llvm::json::Array ops, outputs;
  unsigned nextValue = 0;
  for (Operation &op : entry.getBody().front()) {
    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      names[cast.getResult()] = names.lookup(cast.getSource());
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value value : ret.getOperands())
        outputs.push_back(nameOf(value));
      continue;
    }
    llvm::json::Array operands;
    llvm::json::Object description;
    if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
      description["op"] = "embedding";
      operands = llvm::json::Array{nameOf(embedding.getTable()), nameOf(embedding.getIds())};
    } else if (auto lstm = dyn_cast<LSTMOp>(op)) {
      description["op"] = "lstm";
      operands = llvm::json::Array{nameOf(lstm.getInput()), nameOf(lstm.getWIh()),
                  nameOf(lstm.getWHh()),   nameOf(lstm.getBIh()),
                  nameOf(lstm.getBHh()),   nameOf(lstm.getH0()),
                  nameOf(lstm.getC0())};
    } else if (auto linear = dyn_cast<LinearOp>(op)) {
      description["op"] = "linear";
      operands = llvm::json::Array{nameOf(linear.getInput()), nameOf(linear.getWeight()),
                  nameOf(linear.getBias())};
    } else if (auto logSoftmax = dyn_cast<LogSoftmaxOp>(op)) {
      description["op"] = "log_softmax";
      operands = llvm::json::Array{nameOf(logSoftmax.getInput())};
    } else if (auto loss = dyn_cast<CrossEntropyOp>(op)) {
      description["op"] = "cross_entropy";
      description["reduction"] = stringifyReduction(loss.getReduction());
      operands = llvm::json::Array{nameOf(loss.getLogits()), nameOf(loss.getTargets())};
    } else {
      return std::nullopt;
    }
    llvm::json::Array results;
    for (Value result : op.getResults()) {
      names[result] = "%" + std::to_string(nextValue++);
      results.push_back(names[result]);
    }
    description["operands"] = std::move(operands);
    description["results"] = std::move(results);
    ops.push_back(std::move(description));
  }
  return llvm::json::Object{{"ops", std::move(ops)},
                            {"outputs", std::move(outputs)}};
}

FailureOr<std::string> mlir::recur::describeModel(func::FuncOp entry,
                                                  StringRef target,
                                                  StringRef pipeline,
                                                  StringRef cudaArch) {
  llvm::json::Array arguments, outputs;
  for (BlockArgument argument : entry.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto input =
        entry.getArgAttrOfType<StringAttr>(index, RecurDialect::kInputAttrName);
    auto weight =
        entry.getArgAttrOfType<StringAttr>(index, RecurDialect::kWeightAttrName);
    if (!input && !weight)
      return entry.emitError()
             << "argument #" << index << " of @" << entry.getSymName()
             << " has no name: give it a '" << RecurDialect::kInputAttrName
             << "' or '" << RecurDialect::kWeightAttrName << "' attribute";
    StringRef name = input ? input.getValue() : weight.getValue();
    std::string what =
        (input ? "input '" : "weight '") + name.str() + "'";
    FailureOr<llvm::json::Object> description =
        describeTensor(entry, what, name, argument.getType(),
                       /*dynamicAllowed=*/bool(input), isBatchMajor(argument));
    if (failed(description))
      return failure();
    description->insert({"kind", input ? "input" : "weight"});
    if (std::optional<int64_t> bound = indexBound(argument))
      description->insert({"range", llvm::json::Array{0, *bound}});
    arguments.push_back(std::move(*description));
  }
  for (auto [index, type] : llvm::enumerate(entry.getResultTypes())) {
    auto name =
        entry.getResultAttrOfType<StringAttr>(index, RecurDialect::kOutputAttrName);
    if (!name)
      return entry.emitError()
             << "result #" << index << " of @" << entry.getSymName()
             << " has no name: give it a '" << RecurDialect::kOutputAttrName
             << "' attribute";
    FailureOr<llvm::json::Object> description =
        describeTensor(entry, "output '" + name.getValue().str() + "'",
                       name.getValue(), type, /*dynamicAllowed=*/true);
    if (failed(description))
      return failure();
    outputs.push_back(std::move(*description));
  }
  if (outputs.empty())
    return entry.emitError() << "@" << entry.getSymName()
                             << " returns nothing; a model needs an output";

  llvm::json::Object model{{"abi_version", RECUR_MODEL_ABI_VERSION},
                           {"entry", entry.getSymName()},
                           {"target", target},
                           {"pipeline", pipeline},
                           {"arguments", std::move(arguments)},
                           {"outputs", std::move(outputs)}};
  if (!cudaArch.empty())
    model["cuda_arch"] = cudaArch;
  if (std::optional<llvm::json::Object> program = describeProgram(entry))
    model["program"] = std::move(*program);
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(model));
  return json;
}
