//===- ModelDescription.cpp - what a compiled model expects ---------------===//

#include "recur/Target/ModelDescription.h"

#include "CellProgram.h"

#include "recur/IR/RecurOps.h"
#include "recur/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

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

/// What an index operand carries: followed back through ops that only view
/// or move values (casts, reshapes, slices, transposes) to where the values
/// come from.
static Value indexSource(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<tensor::CastOp>(def))
      value = cast.getSource();
    else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto reshape = dyn_cast<tensor::ReshapeOp>(def))
      value = reshape.getSource();
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def))
      value = slice.getSource();
    else if (auto transpose = dyn_cast<TransposeOp>(def))
      value = transpose.getInput();
    else
      break;
  }
  return value;
}

/// The bound [0, bound) of every input used as indices, from every op that
/// indexes with it: an embedding's table rows, a loss's classes. An input
/// that indexes several tables gets the smallest bound. Indices the runtime
/// cannot check (computed ones) are refused; constant ones are checked here.
static FailureOr<llvm::DenseMap<Value, int64_t>>
indexBounds(func::FuncOp entry) {
  llvm::DenseMap<Value, int64_t> bounds;
  bool ok = true;
  auto require = [&](Operation *user, StringRef what, Value indices,
                     int64_t bound) {
    if (ShapedType::isDynamic(bound)) {
      user->emitOpError()
          << "the size that bounds its " << what
          << " must be static, so that they can be range-checked";
      ok = false;
      return;
    }
    Value source = indexSource(indices);
    auto argument = dyn_cast<BlockArgument>(source);
    if (argument && argument.getOwner() == &entry.getBody().front() &&
        entry.getArgAttr(argument.getArgNumber(),
                         RecurDialect::kInputAttrName)) {
      auto [it, inserted] = bounds.try_emplace(argument, bound);
      if (!inserted)
        it->second = std::min(it->second, bound);
      return;
    }
    DenseIntElementsAttr constant;
    if (matchPattern(source, m_Constant(&constant))) {
      for (auto [position, value] :
           llvm::enumerate(constant.getValues<APInt>()))
        if (value.isNegative() || value.sge(bound)) {
          user->emitOpError()
              << "its " << what << " hold the constant " << value.getSExtValue()
              << " at flat index " << position << "; values must lie in [0, "
              << bound << ")";
          ok = false;
          return;
        }
      return;
    }
    InFlightDiagnostic diag = user->emitOpError();
    diag << "its " << what << " come from ";
    if (Operation *def = source.getDefiningOp())
      diag << "'" << def->getName() << "'";
    else
      diag << "a weight or a block argument";
    diag << ", which the runtime cannot range-check: indices must come from a "
            "model input (through casts, reshapes, slices or transposes) or a "
            "constant";
    ok = false;
  };
  entry.walk([&](Operation *op) {
    if (auto embedding = dyn_cast<EmbeddingOp>(op))
      require(op, "ids", embedding.getIds(),
              cast<ShapedType>(embedding.getTable().getType()).getShape()[0]);
    else if (auto loss = dyn_cast<CrossEntropyOp>(op))
      require(op, "targets", loss.getTargets(),
              cast<ShapedType>(loss.getLogits().getType()).getShape().back());
  });
  if (!ok)
    return failure();
  return bounds;
}

/// Static sizes the generated code trusts: a size that is dynamic in the
/// inputs must not become static on the way (a tensor.cast, or a recur op
/// whose declared result is more static than its operands imply). The code
/// would index by the static size whatever the run's T or B, and nothing
/// can check it at run time. Tensor types too large to address are refused.
static LogicalResult checkStaticSizes(func::FuncOp entry) {
  auto fixesDynamicSize = [](Type from, Type to) -> std::optional<unsigned> {
    auto source = dyn_cast<RankedTensorType>(from);
    auto result = dyn_cast<RankedTensorType>(to);
    if (!source || !result || source.getRank() != result.getRank())
      return std::nullopt;
    for (unsigned dim = 0; dim < source.getRank(); ++dim)
      if (source.isDynamicDim(dim) && !result.isDynamicDim(dim))
        return dim;
    return std::nullopt;
  };
  auto refuse = [](Operation *op, unsigned dim, Type type) {
    return op->emitOpError()
           << "fixes dimension " << dim << " to "
           << cast<RankedTensorType>(type).getDimSize(dim)
           << " where it is only known at run time (" << type
           << "); the compiled model cannot check that: give the inputs "
              "static shapes (recur-gen --seq/--batch) or keep it dynamic";
  };
  auto tooLarge = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.getElementType().isIntOrFloat())
      return false;
    int64_t bytes = (tensor.getElementTypeBitWidth() + 7) / 8;
    for (int64_t size : tensor.getShape())
      if (!ShapedType::isDynamic(size) &&
          __builtin_mul_overflow(bytes, size, &bytes))
        return true;
    return false;
  };
  WalkResult walk =
      entry.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
        for (Value value : op->getResults())
          if (tooLarge(value.getType()))
            return op->emitOpError() << "result type " << value.getType()
                                     << " is larger than 2^63 bytes";
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (BlockArgument argument : block.getArguments())
              if (tooLarge(argument.getType()))
                return op->emitOpError()
                       << "argument type " << argument.getType()
                       << " is larger than 2^63 bytes";
        if (auto cast = dyn_cast<tensor::CastOp>(op))
          if (std::optional<unsigned> dim =
                  fixesDynamicSize(cast.getSource().getType(), cast.getType()))
            return refuse(op, *dim, cast.getType());
        if (auto inference = dyn_cast<ResultTypeInference>(op))
          for (auto [result, inferred] :
               llvm::zip_equal(op->getResults(), inference.inferResultTypes()))
            if (std::optional<unsigned> dim =
                    fixesDynamicSize(inferred, result.getType()))
              return refuse(op, *dim, result.getType());
        return WalkResult::advance();
      });
  return failure(walk.wasInterrupted());
}

/// Whether `transpose` swaps the first two dimensions (batch-first <->
/// time-major) and keeps the others.
static bool swapsTimeAndBatch(TransposeOp transpose) {
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  if (permutation.size() < 2 || permutation[0] != 1 || permutation[1] != 0)
    return false;
  for (size_t dim = 2; dim < permutation.size(); ++dim)
    if (permutation[dim] != int64_t(dim))
      return false;
  return true;
}

/// Whether `use` is a recurrence's operand named one of `names`.
static bool isRecurrenceOperand(OpOperand &use,
                                std::initializer_list<StringRef> names) {
  Operation *owner = use.getOwner();
  auto named = dyn_cast<NamedOperands>(owner);
  if (!named || !isa<LSTMOp, GRUOp, RNNTanhOp, RNNReluOp, RNNOp, LSTMGradOp,
                     GRUGradOp, RNNGradOp>(owner))
    return false;
  for (auto [index, name] : llvm::enumerate(named.getOperandNames()))
    if (llvm::is_contained(names, name)) {
      OperandRange range = named.getNamedOperand(index);
      if (range.empty())
        continue;
      unsigned first = range.getBeginOperandIndex();
      if (use.getOperandNumber() >= first &&
          use.getOperandNumber() < first + range.size())
        return true;
    }
  return false;
}

/// Whether `use` is a recurrence's initial state (h0, c0, or an init of a
/// recur.rnn), or a state or its gradient in a recurrence's backward.
static bool isInitialState(OpOperand &use) {
  return isRecurrenceOperand(use, {"h0", "c0", "init", "d_h_n", "d_c_n"});
}

/// Whether `use` is a recurrence's sequence lengths.
static bool isSequenceLengths(OpOperand &use) {
  return isRecurrenceOperand(use, {"lengths"});
}

/// The symbols of a model tensor's leading dimensions, which alone may be
/// dynamic: a recurrence's initial or final state is [B, H], its lengths [B]; a
/// batch-first tensor (an input that a recur.transpose makes time-major, or an
/// output computed from a transposed time-major one) [B, T, ...]; everything
/// else time-major [T, B, ...].
static SmallVector<StringRef, 2> leadingSymbols(Value value) {
  for (OpOperand &use : value.getUses()) {
    if (isInitialState(use) || isSequenceLengths(use))
      return {"B"};
    auto transpose = dyn_cast<TransposeOp>(use.getOwner());
    if (transpose && swapsTimeAndBatch(transpose))
      return {"B", "T"};
  }
  Value source = value;
  while (auto cast = source.getDefiningOp<tensor::CastOp>())
    source = cast.getSource();
  // A recurrence's results after y are its final states, and the last two of
  // an LSTM's backward the initial state's gradients.
  if (Operation *recurrence = source.getDefiningOp();
      isa_and_nonnull<LSTMOp, GRUOp, RNNTanhOp, RNNReluOp, RNNOp>(recurrence) &&
      source != recurrence->getResult(0))
    return {"B"};
  if (auto grad = source.getDefiningOp<LSTMGradOp>();
      grad && (source == grad.getDH0() || source == grad.getDC0()))
    return {"B"};
  if (auto grad = source.getDefiningOp<GRUGradOp>();
      grad && source == grad.getDH0())
    return {"B"};
  if (auto grad = source.getDefiningOp<RNNGradOp>();
      grad && source == grad.getDH0())
    return {"B"};
  // Outputs: row-wise ops keep their input's leading dimensions.
  Operation *producer = value.getDefiningOp();
  while (producer && isa<LinearOp, LogSoftmaxOp, tensor::CastOp>(producer))
    producer = producer->getOperand(0).getDefiningOp();
  if (auto transpose = dyn_cast_or_null<TransposeOp>(producer);
      transpose && swapsTimeAndBatch(transpose))
    return {"B", "T"};
  // An input nothing reads (a backward's initial state: it reads the kept
  // states instead): a float matrix is a state [B, n].
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (isa<BlockArgument>(value) && value.use_empty() && type &&
      type.getRank() == 2 && isa<FloatType>(type.getElementType()))
    return {"B"};
  return {"T", "B"};
}

/// The symbols of a model tensor's dimensions: its `recur.dims` attribute
/// (`dims`) if it has one, else those leadingSymbols infers (`inferred`).
static FailureOr<SmallVector<StringRef, 4>>
tensorSymbols(func::FuncOp entry, const std::string &what, Type type,
              DictionaryAttr attributes, ArrayRef<StringRef> inferred) {
  auto dims = attributes
                  ? attributes.getAs<ArrayAttr>(RecurDialect::kDimsAttrName)
                  : ArrayAttr();
  if (!dims)
    return SmallVector<StringRef, 4>(inferred);
  auto tensor = dyn_cast<RankedTensorType>(type);
  SmallVector<StringRef, 4> symbols;
  for (Attribute dim : dims) {
    auto symbol = dyn_cast<StringAttr>(dim);
    if (!symbol || !llvm::is_contained({"T", "B", ""}, symbol.getValue()))
      return entry.emitError()
             << what << ": '" << RecurDialect::kDimsAttrName
             << "' holds \"T\", \"B\" or \"\" per dimension, got " << dim;
    symbols.push_back(symbol.getValue());
  }
  if (tensor && static_cast<int64_t>(symbols.size()) != tensor.getRank())
    return entry.emitError()
           << what << ": '" << RecurDialect::kDimsAttrName << "' names "
           << symbols.size() << " dimensions of a tensor of rank "
           << tensor.getRank();
  return symbols;
}

/// {"name", "dtype", "shape", "dims"} of one tensor; `what` names it in errors
/// and `symbols` are those of its leading dimensions (leadingSymbols).
static FailureOr<llvm::json::Object>
describeTensor(func::FuncOp entry, const std::string &what, StringRef name,
               Type type, bool dynamicAllowed, ArrayRef<StringRef> symbols,
               bool isInput = false) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return entry.emitError()
           << what << " must be a ranked tensor, got " << type;
  FailureOr<std::string> dtype = dtypeName(tensor.getElementType());
  if (failed(dtype))
    return entry.emitError()
           << what << " has element type " << tensor.getElementType()
           << ", which the runtime cannot exchange";
  llvm::json::Array shape, dims;
  for (auto [index, size] : llvm::enumerate(tensor.getShape())) {
    shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    StringRef symbol = index < symbols.size() ? symbols[index] : StringRef();
    if (!ShapedType::isDynamic(size)) {
      // An input's static T and B are named too, so that tools (recur-run's
      // sequences/s) find the batch of a model compiled for fixed sizes; a
      // rank-1 input is no sequence.
      bool named = isInput && (symbols.size() == 1 || tensor.getRank() >= 2);
      dims.push_back(named && !symbol.empty() ? llvm::json::Value(symbol)
                                              : nullptr);
      continue;
    }
    if (!dynamicAllowed)
      return entry.emitError()
             << what << " must have a static shape, got " << type;
    if (symbol.empty()) {
      InFlightDiagnostic diag = entry.emitError()
                                << what << " has a dynamic dimension " << index
                                << "; only dimension";
      if (static_cast<int64_t>(symbols.size()) == tensor.getRank())
        diag << "s that '" << RecurDialect::kDimsAttrName
             << "' names T or B may be dynamic";
      else if (symbols.size() == 2)
        diag << "s 0 (" << symbols[0] << ") and 1 (" << symbols[1]
             << ") may be dynamic";
      else
        diag << " 0 (B) of an initial state may be dynamic";
      return diag;
    }
    dims.push_back(symbol);
  }
  return llvm::json::Object{{"name", name},
                            {"dtype", *dtype},
                            {"shape", std::move(shape)},
                            {"dims", std::move(dims)}};
}

/// The entry's recur ops as a small JSON graph that `recur-run --check`
/// interprets with the reference library. Values are argument names or `%N`
/// (the N-th op result); each op's operands are keyed by their ODS names
/// (NamedOperands). Only the ops the outputs depend on are in it: a training
/// step's backward (IR printed after recur-differentiate) computes weights,
/// not outputs. Returns nullopt when those ops include others than recur
/// ops and casts; the model then simply has no "program".
static std::optional<llvm::json::Object> describeProgram(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseSet<Value> needed;
  for (auto [index, value] : llvm::enumerate(terminator.getOperands()))
    if (!entry.getResultAttr(index, RecurDialect::kUpdateAttrName))
      needed.insert(value);
  llvm::DenseSet<Operation *> neededOps;
  for (Operation &op : llvm::reverse(body.without_terminator()))
    if (llvm::any_of(op.getResults(),
                     [&](Value result) { return needed.contains(result); })) {
      neededOps.insert(&op);
      needed.insert(op.operand_begin(), op.operand_end());
    }

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
  for (Operation &op : body) {
    if (!neededOps.contains(&op) && !isa<func::ReturnOp>(op))
      continue;
    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      names[cast.getResult()] = names.lookup(cast.getSource());
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [index, value] : llvm::enumerate(ret.getOperands()))
        if (!entry.getResultAttr(index, RecurDialect::kUpdateAttrName))
          outputs.push_back(nameOf(value));
      continue;
    }
    auto defineResults = [&](llvm::json::Object description) {
      llvm::json::Array results;
      for (Value result : op.getResults()) {
        names[result] = "%" + std::to_string(nextValue++);
        results.push_back(names[result]);
      }
      description["results"] = std::move(results);
      ops.push_back(std::move(description));
    };
    // Bidirectional layers join their directions' outputs.
    if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
      llvm::json::Array inputs;
      for (Value input : concat.getInputs())
        inputs.push_back(nameOf(input));
      defineResults(llvm::json::Object{
          {"op", "concat"},
          {"dim", int64_t(concat.getDim())},
          {"operands", llvm::json::Object{{"inputs", std::move(inputs)}}}});
      continue;
    }
    // Tensor, linalg and arith ops between the recur ops (a backward's
    // slices and sums): a program of the reference's cell interpreter.
    if (!isa<NamedOperands>(op))
      if (std::optional<llvm::json::Object> program = describeTensorOp(op)) {
        llvm::json::Array inputs;
        for (Value operand : op.getOperands())
          inputs.push_back(nameOf(operand));
        defineResults(llvm::json::Object{
            {"op", "tensor"},
            {"program", std::move(*program)},
            {"operands", llvm::json::Object{{"inputs", std::move(inputs)}}}});
        continue;
      }
    // Operands by their ODS names, whatever the op: the reference
    // interpreter reads them by name.
    auto named = dyn_cast<NamedOperands>(op);
    if (!named || (op.getNumRegions() > 0 && !isa<RNNOp>(op)))
      return std::nullopt;
    llvm::json::Object description{{"op", op.getName().stripDialect()}};
    // A cell region, as the reference's cell interpreter reads it.
    if (auto rnn = dyn_cast<RNNOp>(op)) {
      std::optional<llvm::json::Object> cell = describeCell(rnn);
      if (!cell)
        return std::nullopt;
      int64_t outputSize =
          cast<RankedTensorType>(rnn.getY().getType()).getDimSize(2);
      if (ShapedType::isDynamic(outputSize))
        return std::nullopt;
      description["cell"] = std::move(*cell);
      description["output_size"] = outputSize;
    }
    llvm::json::Object operands;
    for (auto [index, name] : llvm::enumerate(named.getOperandNames())) {
      OperandRange values = named.getNamedOperand(index);
      if (values.size() > 1) {
        llvm::json::Array group;
        for (Value value : values)
          group.push_back(nameOf(value));
        operands[name] = std::move(group);
      } else {
        operands[name] = values.empty() ? nullptr : nameOf(values.front());
      }
    }
    if (auto loss = dyn_cast<CrossEntropyOp>(op))
      description["reduction"] = stringifyReduction(loss.getReduction());
    if (op.hasAttrOfType<UnitAttr>("reverse"))
      description["reverse"] = true;
    if (op.hasAttrOfType<UnitAttr>("relu"))
      description["relu"] = true;
    if (auto transpose = dyn_cast<TransposeOp>(op))
      description["permutation"] =
          llvm::json::Array(transpose.getPermutation());
    if (auto embeddingGrad = dyn_cast<EmbeddingGradOp>(op))
      description["rows"] = embeddingGrad.getRows();
    description["operands"] = std::move(operands);
    defineResults(std::move(description));
  }
  return llvm::json::Object{{"ops", std::move(ops)},
                            {"outputs", std::move(outputs)}};
}

/// The tensors `compiled` (the entry after fusion) takes beyond `entry`'s
/// arguments, and the prologue that computes them: {"entry", "weights" it
/// reads, "results" it returns}, by name.
static LogicalResult describePrologue(func::FuncOp entry, func::FuncOp compiled,
                                      llvm::json::Array &arguments,
                                      llvm::json::Object &model) {
  for (unsigned index = entry.getNumArguments();
       index < compiled.getNumArguments(); ++index) {
    auto name = compiled.getArgAttrOfType<StringAttr>(
        index, RecurDialect::kDerivedAttrName);
    if (!name)
      return compiled.emitError()
             << "internal error: argument #" << index
             << " was added by fusion but is not a derived tensor";
    FailureOr<llvm::json::Object> description = describeTensor(
        compiled, "derived tensor '" + name.getValue().str() + "'", name,
        compiled.getArgument(index).getType(), /*dynamicAllowed=*/false,
        /*symbols=*/{});
    if (failed(description))
      return failure();
    description->insert({"kind", "derived"});
    arguments.push_back(std::move(*description));
  }
  auto reference = compiled->getAttrOfType<FlatSymbolRefAttr>(
      RecurDialect::kPrologueAttrName);
  if (!reference)
    return success();
  auto prologue =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(compiled, reference);
  if (!prologue)
    return compiled.emitError() << "internal error: no prologue " << reference;
  llvm::json::Array weights, results;
  for (unsigned index = 0; index < prologue.getNumArguments(); ++index)
    weights.push_back(
        prologue
            .getArgAttrOfType<StringAttr>(index, RecurDialect::kWeightAttrName)
            .getValue());
  for (unsigned index = 0; index < prologue.getNumResults(); ++index)
    results.push_back(prologue
                          .getResultAttrOfType<StringAttr>(
                              index, RecurDialect::kDerivedAttrName)
                          .getValue());
  model["prologue"] = llvm::json::Object{{"entry", prologue.getSymName()},
                                         {"weights", std::move(weights)},
                                         {"results", std::move(results)}};
  return success();
}

FailureOr<std::string>
mlir::recur::describeModel(func::FuncOp entry, func::FuncOp compiled,
                           StringRef target, StringRef pipeline,
                           StringRef fusion, StringRef precision,
                           StringRef cudaArch) {
  if (failed(checkStaticSizes(entry)))
    return failure();
  FailureOr<llvm::DenseMap<Value, int64_t>> bounds = indexBounds(entry);
  if (failed(bounds))
    return failure();
  llvm::json::Array arguments, outputs;
  for (BlockArgument argument : entry.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto input =
        entry.getArgAttrOfType<StringAttr>(index, RecurDialect::kInputAttrName);
    auto weight = entry.getArgAttrOfType<StringAttr>(
        index, RecurDialect::kWeightAttrName);
    if (!input && !weight)
      return entry.emitError()
             << "argument #" << index << " of @" << entry.getSymName()
             << " has no name: give it a '" << RecurDialect::kInputAttrName
             << "' or '" << RecurDialect::kWeightAttrName << "' attribute";
    StringRef name = input ? input.getValue() : weight.getValue();
    std::string what = (input ? "input '" : "weight '") + name.str() + "'";
    FailureOr<SmallVector<StringRef, 4>> symbols =
        tensorSymbols(entry, what, argument.getType(),
                      entry.getArgAttrDict(index), leadingSymbols(argument));
    if (failed(symbols))
      return failure();
    FailureOr<llvm::json::Object> description =
        describeTensor(entry, what, name, argument.getType(),
                       /*dynamicAllowed=*/bool(input), *symbols,
                       /*isInput=*/bool(input));
    if (failed(description))
      return failure();
    description->insert({"kind", input ? "input" : "weight"});
    if (auto bound = bounds->find(argument); bound != bounds->end())
      description->insert({"range", llvm::json::Array{0, bound->second}});
    // Sequence lengths: the runtime checks each lies in [1, T], T the
    // recurrence's static steps or (-1) the run's.
    for (OpOperand &use : argument.getUses())
      if (input && isSequenceLengths(use)) {
        auto sequence =
            cast<RankedTensorType>(use.getOwner()->getOperand(0).getType());
        int64_t steps = sequence.isDynamicDim(0) ? -1 : sequence.getDimSize(0);
        description->insert({"lengths", llvm::json::Object{{"steps", steps}}});
        break;
      }
    arguments.push_back(std::move(*description));
  }
  auto returned = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
  for (auto [index, type] : llvm::enumerate(entry.getResultTypes())) {
    // A training step's new weights (IR printed after recur-differentiate)
    // are not outputs: the run writes them over the bound weights.
    if (entry.getResultAttr(index, RecurDialect::kUpdateAttrName))
      continue;
    auto name = entry.getResultAttrOfType<StringAttr>(
        index, RecurDialect::kOutputAttrName);
    if (!name)
      return entry.emitError()
             << "result #" << index << " of @" << entry.getSymName()
             << " has no name: give it a '" << RecurDialect::kOutputAttrName
             << "' attribute";
    std::string what = "output '" + name.getValue().str() + "'";
    FailureOr<SmallVector<StringRef, 4>> symbols =
        tensorSymbols(entry, what, type, entry.getResultAttrDict(index),
                      leadingSymbols(returned.getOperand(index)));
    if (failed(symbols))
      return failure();
    FailureOr<llvm::json::Object> description =
        describeTensor(entry, what, name.getValue(), type,
                       /*dynamicAllowed=*/true, *symbols);
    if (failed(description))
      return failure();
    if (entry.getResultAttr(index, RecurDialect::kKeptAttrName))
      description->insert({"kept", true});
    outputs.push_back(std::move(*description));
  }
  if (outputs.empty())
    return entry.emitError() << "@" << entry.getSymName()
                             << " returns nothing; a model needs an output";

  llvm::json::Object model{{"abi_version", RECUR_MODEL_ABI_VERSION},
                           {"entry", entry.getSymName()},
                           {"target", target},
                           {"pipeline", pipeline},
                           {"fusion", fusion},
                           {"precision", precision},
                           {"arguments", std::move(arguments)},
                           {"outputs", std::move(outputs)}};
  if (compiled &&
      failed(describePrologue(entry, compiled, *model["arguments"].getAsArray(),
                              model)))
    return failure();
  if (compiled)
    if (auto sgd =
            compiled->getAttrOfType<SGDAttr>(RecurDialect::kTrainAttrName)) {
      llvm::json::Array updates;
      for (unsigned index = 0; index < compiled.getNumResults(); ++index)
        if (auto name = compiled.getResultAttrOfType<StringAttr>(
                index, RecurDialect::kUpdateAttrName))
          updates.push_back(name.getValue());
      model["training"] = llvm::json::Object{
          {"optimizer", "sgd"},
          {"lr", sgd.getLearningRate()},
          {"clip_norm", sgd.getMaxNorm()},
          {"updates", std::move(updates)},
          // recur.lstm_grad's policy: y kept, gates recomputed per layer.
          {"activations", "recomputed from each layer's output sequence"}};
    }
  if (!cudaArch.empty())
    model["cuda_arch"] = cudaArch;
  if (std::optional<llvm::json::Object> program = describeProgram(entry))
    model["program"] = std::move(*program);
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(model));
  return json;
}
