//===- ModelGen.cpp - recur IR for standard architectures -----------------===//

#include "recur/Gen/ModelGen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "recur/IR/RecurOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::recur;

static constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

static std::string checkSize(const char *flag, std::optional<int64_t> value) {
  if (!value || (*value > 0 && *value <= kMaxSize))
    return "";
  return std::string("--") + flag + " must be between 1 and " +
         std::to_string(kMaxSize) + ", got " + std::to_string(*value);
}

static std::string validateSequence(const SequenceConfig &config) {
  if (config.dtype != "f32" && config.dtype != "f16" && config.dtype != "bf16")
    return "--dtype must be f32, f16 or bf16, got '" + config.dtype + "'";
  for (const std::string &error :
       {checkSize("seq", config.seq), checkSize("batch", config.batch)})
    if (!error.empty())
      return error;
  return "";
}

static std::string validateTraining(const LstmLmConfig &config) {
  if (!config.train)
    return "";
  if (config.state)
    return "--train with --state: training steps do not differentiate "
           "through the LSTM's state yet";
  if (config.lengths)
    return "--train with --lengths: training steps do not differentiate "
           "through sequence lengths yet";
  for (auto [set, flag] : {std::pair{config.batchFirst, "--batch-first"},
                           std::pair{!config.bias, "--no-bias"},
                           std::pair{config.bidirectional, "--bidirectional"},
                           std::pair{config.projSize != 0, "--proj-size"}})
    if (set)
      return std::string("--train with ") + flag +
             ": training steps are compiled for time-major, biased, "
             "unidirectional LSTMs without projections only";
  if (config.logSoftmax)
    return "--train with --log-softmax: a training step returns its loss";
  if (config.dtype != "f32")
    return "--train needs --dtype f32: training steps are compiled in f32 "
           "only, got '" +
           config.dtype + "'";
  if (!std::isfinite(config.train->lr) || config.train->lr <= 0)
    return "--lr must be finite and positive, got " +
           std::to_string(config.train->lr);
  if (!std::isfinite(config.train->clipNorm) || config.train->clipNorm < 0)
    return "--clip-norm must be finite and at least 0 (0: no clipping), got " +
           std::to_string(config.train->clipNorm);
  return "";
}

/// nn.LSTM's rule: 0 <= proj_size < hidden.
static std::string validateProjection(const SequenceConfig &config,
                                      int64_t hidden) {
  if (config.projSize < 0 || config.projSize >= hidden)
    return "--proj-size must be at least 0 (0: no projection) and smaller "
           "than --hidden " +
           std::to_string(hidden) + ", got " + std::to_string(config.projSize);
  return "";
}

/// GRU and RNN layers: no projection (an LSTM's option).
static std::string validateCell(const SequenceConfig &config) {
  if (config.cell != CellKind::lstm && config.projSize != 0)
    return "--proj-size is an LSTM's option (nn.LSTM(proj_size=P)); GRU and "
           "RNN layers have none";
  return "";
}

/// What recur-differentiate's vector-Jacobian product covers so far.
static std::string validateVjp(const SequenceConfig &config) {
  if (!config.vjp)
    return "";

  if (config.dtype != "f32")
    return "--vjp needs --dtype f32: gradients are compiled in f32 only";
  for (auto [set, flag] : {std::pair{config.bidirectional, "--bidirectional"},
                           std::pair{config.batchFirst, "--batch-first"}})
    if (set)
      return std::string("--vjp with ") + flag +
             ": not differentiated yet (recur.compile(train=True) runs each "
             "direction as its own layer and transposes batch-first input "
             "itself)";
  return "";
}

std::string mlir::recur::validate(const LstmLmConfig &config) {
  for (const std::string &error :
       {checkSize("vocab", config.vocab), checkSize("embed", config.embed),
        checkSize("hidden", config.hidden), checkSize("layers", config.layers),
        validateSequence(config), validateProjection(config, config.hidden),
        validateTraining(config), validateCell(config), validateVjp(config)})
    if (!error.empty())
      return error;
  if (config.vjp && config.train)
    return "--vjp with --train: a training step derives its own backward";
  if (config.vjp && config.logSoftmax)
    return "--vjp with --log-softmax: log_softmax has no gradient rule yet; "
           "take the logits and the loss in PyTorch";
  return "";
}

std::string mlir::recur::validate(const LstmStackConfig &config) {
  for (const std::string &error :
       {checkSize("input", config.input), checkSize("hidden", config.hidden),
        checkSize("layers", config.layers), validateSequence(config),
        validateProjection(config, config.hidden), validateCell(config),
        validateVjp(config)})
    if (!error.empty())
      return error;
  return "";
}

namespace {
/// Accumulates the entry function's arguments with their external names, then
/// builds `func.func @forward` around a body.
class ModelBuilder {
public:
  ModelBuilder(MLIRContext &context, const SequenceConfig &config)
      : context(context), builder(&context), config(config) {
    context
        .loadDialect<RecurDialect, func::FuncDialect, tensor::TensorDialect>();
    if (config.dtype == "f16")
      floatType = builder.getF16Type();
    else if (config.dtype == "bf16")
      floatType = builder.getBF16Type();
    else
      floatType = builder.getF32Type();
  }

  int64_t seq() const { return config.seq.value_or(ShapedType::kDynamic); }
  int64_t batch() const { return config.batch.value_or(ShapedType::kDynamic); }
  Type floats() const { return floatType; }
  Type indices() { return builder.getI64Type(); }

  void addInput(StringRef name, RankedTensorType type) {
    addArgument(type, RecurDialect::kInputAttrName, name);
  }
  void addWeight(StringRef name, ArrayRef<int64_t> shape) {
    addArgument(RankedTensorType::get(shape, floatType),
                RecurDialect::kWeightAttrName, name);
  }

  /// Makes the model a training step with these optimizer settings.
  void setTraining(const TrainConfig &train) {
    trainAttr = SGDAttr::get(&context, train.lr, train.clipNorm);
  }

  /// A model output: its external name and value.
  struct Output {
    std::string name;
    Value value;
    /// An activation kept for a backward (`recur.kept`).
    bool kept = false;
  };

  /// Build the module; `body` gets the arguments in the order they were added
  /// and returns the outputs.
  OwningOpRef<ModuleOp>
  build(StringRef modelName,
        llvm::function_ref<SmallVector<Output>(OpBuilder &, ValueRange)> body) {
    Location loc = NameLoc::get(builder.getStringAttr(modelName));
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto function = func::FuncOp::create(builder, loc, "forward",
                                         builder.getFunctionType(argTypes, {}));
    Block *entry = function.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    SmallVector<Output> outputs = body(builder, entry->getArguments());
    SmallVector<Value> values = llvm::map_to_vector(
        outputs, [](const Output &output) { return output.value; });
    func::ReturnOp::create(builder, loc, values);
    function.setFunctionType(
        builder.getFunctionType(argTypes, ValueRange(values).getTypes()));
    for (auto [index, attrs] : llvm::enumerate(argAttrs))
      function.setArgAttrs(index, attrs);
    for (auto [index, output] : llvm::enumerate(outputs))
      function.setResultAttr(index, RecurDialect::kOutputAttrName,
                             builder.getStringAttr(output.name));
    for (auto [index, output] : llvm::enumerate(outputs))
      if (output.kept)
        function.setResultAttr(index, RecurDialect::kKeptAttrName,
                               builder.getUnitAttr());
    if (trainAttr)
      function->setAttr(RecurDialect::kTrainAttrName, trainAttr);
    if (config.vjp)
      function->setAttr(RecurDialect::kVjpAttrName, builder.getUnitAttr());
    else if (config.keepActivations)
      // recur-differentiate adds what a cell it differentiates as a
      // recur.rnn (an LSTM's projection) reads: its states at each step.
      function->setAttr(RecurDialect::kKeepActivationsAttrName,
                        builder.getUnitAttr());
    return module;
  }

private:
  void addArgument(Type type, StringRef attrName, StringRef name) {
    argTypes.push_back(type);
    argAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(attrName, builder.getStringAttr(name))));
  }

  MLIRContext &context;
  OpBuilder builder;
  const SequenceConfig &config;
  Type floatType;
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SGDAttr trainAttr;
};
} // namespace

/// The state_dict suffixes of an nn.LSTM's directions: "" and, when
/// bidirectional, "_reverse".
static SmallVector<StringRef, 2>
directionSuffixes(const SequenceConfig &config) {
  if (config.bidirectional)
    return {"", "_reverse"};
  return {""};
}

/// The state_dict suffix of a layer's direction: "_l<layer><direction>".
static std::string layerSuffix(int64_t layer, StringRef direction) {
  return ("_l" + std::to_string(layer) + direction).str();
}

/// The size of an LSTM layer's hidden state and output: the projection's,
/// or `hidden`.
static int64_t outputSize(const SequenceConfig &config, int64_t hidden) {
  return config.projSize ? config.projSize : hidden;
}

/// The gates of the layers' cell: the rows of its weights are gates x
/// hidden.
static int64_t gatesOf(CellKind cell) {
  switch (cell) {
  case CellKind::lstm:
    return 4;
  case CellKind::gru:
    return 3;
  case CellKind::rnnTanh:
  case CellKind::rnnRelu:
    return 1;
  }
  llvm_unreachable("unknown cell");
}

/// The layers' name, as recur-gen's subcommands and an LM's attribute:
/// lstm, gru or rnn.
static StringRef cellName(CellKind cell) {
  return cell == CellKind::lstm  ? "lstm"
         : cell == CellKind::gru ? "gru"
                                 : "rnn";
}

/// The states of one layer and direction: h and c for an LSTM, h else.
static int64_t statesOf(CellKind cell) {
  return cell == CellKind::lstm ? 2 : 1;
}

/// Adds the weights of an nn.LSTM (nn.GRU, nn.RNN) whose state_dict keys
/// start with `prefix`, in state_dict order (by layer, then direction).
static void addRecurrentWeights(ModelBuilder &model,
                                const SequenceConfig &config, StringRef prefix,
                                int64_t input, int64_t hidden, int64_t layers) {
  int64_t directions = directionSuffixes(config).size();
  int64_t output = outputSize(config, hidden);
  int64_t rows = gatesOf(config.cell) * hidden;
  for (int64_t layer = 0; layer < layers; ++layer) {
    int64_t layerInput = layer == 0 ? input : directions * output;
    for (StringRef direction : directionSuffixes(config)) {
      std::string suffix = layerSuffix(layer, direction);
      model.addWeight((prefix + "weight_ih" + suffix).str(),
                      {rows, layerInput});
      model.addWeight((prefix + "weight_hh" + suffix).str(), {rows, output});
      if (config.bias) {
        model.addWeight((prefix + "bias_ih" + suffix).str(), {rows});
        model.addWeight((prefix + "bias_hh" + suffix).str(), {rows});
      }
      if (config.projSize)
        model.addWeight((prefix + "weight_hr" + suffix).str(),
                        {config.projSize, hidden});
    }
  }
}

/// With `config.lengths`, adds the `lengths` input: [B] int64.
static void addLengthsInput(ModelBuilder &model, const SequenceConfig &config) {
  if (config.lengths)
    model.addInput("lengths",
                   RankedTensorType::get({model.batch()}, model.indices()));
}

/// With `config.state`, adds each layer's (and direction's) h0 ([B, P or
/// hidden]) and c0 ([B, hidden]) inputs.
static void addStateInputs(ModelBuilder &model, const SequenceConfig &config,
                           int64_t hidden, int64_t layers) {
  if (!config.state)
    return;
  auto hType = RankedTensorType::get(
      {model.batch(), outputSize(config, hidden)}, model.floats());
  auto cType = RankedTensorType::get({model.batch(), hidden}, model.floats());
  for (int64_t layer = 0; layer < layers; ++layer)
    for (StringRef direction : directionSuffixes(config)) {
      std::string suffix = layerSuffix(layer, direction);
      model.addInput("h0" + suffix, hType);
      if (config.cell == CellKind::lstm)
        model.addInput("c0" + suffix, cType);
    }
}

/// Runs the layers over the time-major `x`; `weights` holds each layer's
/// and direction's weights in state_dict order and `state` (empty, or two
/// per layer and direction) their h0 and c0, `lengths` (or null) each row's
/// length. Returns the last layer's output
/// sequence, then (with a state) each h_n and c_n as model outputs, then
/// (config.keepActivations) each layer's output sequence, kept, the last
/// layer's only with `keepLast` (a stack's is its output already).
static SmallVector<ModelBuilder::Output>
buildLstmLayers(OpBuilder &builder, Location loc, const SequenceConfig &config,
                int64_t layers, Value x, ValueRange weights, ValueRange state,
                Value lengths, StringRef outputName, bool keepLast) {
  SmallVector<ModelBuilder::Output> outputs = {{outputName.str(), Value()}};
  SmallVector<ModelBuilder::Output> kept;
  size_t perDirection = (config.bias ? 4 : 2) + (config.projSize ? 1 : 0);
  int64_t states = statesOf(config.cell);
  SmallVector<StringRef, 2> directions = directionSuffixes(config);
  for (int64_t layer = 0; layer < layers; ++layer) {
    SmallVector<Value, 2> ys;
    for (auto [direction, suffix] : llvm::enumerate(directions)) {
      size_t index = layer * directions.size() + direction;
      ValueRange w = weights.slice(index * perDirection, perDirection);
      ValueRange layerState =
          state.empty() ? ValueRange() : state.slice(states * index, states);
      Value h0 = state.empty() ? Value() : layerState[0];
      Value bIh = config.bias ? w[2] : Value();
      Value bHh = config.bias ? w[3] : Value();
      bool reverse = direction == 1;
      Operation *op;
      switch (config.cell) {
      case CellKind::lstm:
        op = LSTMOp::create(builder, loc, x, w[0], w[1], bIh, bHh, h0,
                            state.empty() ? Value() : layerState[1], reverse,
                            /*wHr=*/config.projSize ? w.back() : Value(),
                            lengths);
        break;
      case CellKind::gru:
        op = GRUOp::create(builder, loc, x, w[0], w[1], bIh, bHh, h0, lengths,
                           reverse);
        break;
      case CellKind::rnnTanh:
        op = RNNTanhOp::create(builder, loc, x, w[0], w[1], bIh, bHh, h0,
                               lengths, reverse);
        break;
      case CellKind::rnnRelu:
        op = RNNReluOp::create(builder, loc, x, w[0], w[1], bIh, bHh, h0,
                               lengths, reverse);
        break;
      }
      ys.push_back(op->getResult(0));
      if (state.empty())
        continue;
      std::string name = layerSuffix(layer, suffix);
      outputs.push_back({"h_n" + name, op->getResult(1)});
      if (config.cell == CellKind::lstm)
        outputs.push_back({"c_n" + name, op->getResult(2)});
    }
    x = ys.size() == 1
            ? ys.front()
            : tensor::ConcatOp::create(builder, loc, /*dim=*/2, ys).getResult();
    if ((config.keepActivations || config.vjp) &&
        (keepLast || layer + 1 < layers))
      kept.push_back({"y_l" + std::to_string(layer), x, /*kept=*/true});
  }
  outputs.front().value = x;
  outputs.append(kept.begin(), kept.end());
  return outputs;
}

/// `value` with its first two dimensions swapped (batch-first <-> time-major).
static Value swapTimeAndBatch(OpBuilder &builder, Location loc, Value value) {
  SmallVector<int64_t> permutation = llvm::to_vector(
      llvm::seq<int64_t>(0, cast<ShapedType>(value.getType()).getRank()));
  std::swap(permutation[0], permutation[1]);
  return TransposeOp::create(builder, loc, value, permutation);
}

/// The type of a sequence input whose time-major shape is `shape`.
static RankedTensorType sequenceType(const SequenceConfig &config,
                                     SmallVector<int64_t> shape,
                                     Type elementType) {
  if (config.batchFirst)
    std::swap(shape[0], shape[1]);
  return RankedTensorType::get(shape, elementType);
}

OwningOpRef<ModuleOp> mlir::recur::buildLstmLm(MLIRContext &context,
                                               const LstmLmConfig &config) {
  assert(validate(config).empty() && "invalid LSTM LM configuration");
  ModelBuilder model(context, config);
  auto ids = sequenceType(config, {model.seq(), model.batch()},
                          IntegerType::get(&context, 64));
  model.addInput("tokens", ids);
  if (config.train) {
    model.addInput("targets", ids);
    model.setTraining(*config.train);
  }
  addLengthsInput(model, config);
  int64_t directions = directionSuffixes(config).size();
  addStateInputs(model, config, config.hidden, config.layers);
  model.addWeight("embedding.weight", {config.vocab, config.embed});
  // The recurrent layers' attribute: lstm, gru or rnn.
  std::string layersName = cellName(config.cell).str();
  addRecurrentWeights(model, config, layersName + ".", config.embed,
                      config.hidden, config.layers);
  model.addWeight(
      "proj.weight",
      {config.vocab, directions * outputSize(config, config.hidden)});
  model.addWeight("proj.bias", {config.vocab});

  return model.build(layersName + "-lm", [&](OpBuilder &builder,
                                             ValueRange args) {
    Location loc = builder.getUnknownLoc();
    Value tokens = args[0];
    if (config.batchFirst)
      tokens = swapTimeAndBatch(builder, loc, tokens);
    ValueRange rest = args.drop_front(config.train ? 2 : 1);
    Value lengths = config.lengths ? rest.front() : Value();
    rest = rest.drop_front(config.lengths ? 1 : 0);
    ValueRange state = rest.take_front(
        config.state ? statesOf(config.cell) * directions * config.layers : 0);
    ValueRange weights = rest.drop_front(state.size());
    Value table = weights[0];
    ValueRange lstmWeights = weights.slice(1, weights.size() - 3);
    Value projWeight = weights[weights.size() - 2];
    Value projBias = weights.back();
    Value x = EmbeddingOp::create(builder, loc, table, tokens);
    SmallVector<ModelBuilder::Output> outputs =
        buildLstmLayers(builder, loc, config, config.layers, x, lstmWeights,
                        state, lengths, "logits", /*keepLast=*/true);
    // Transposed before the projection, where rows are narrowest.
    Value y = outputs.front().value;
    if (config.batchFirst)
      y = swapTimeAndBatch(builder, loc, y);
    Value logits = LinearOp::create(builder, loc, y, projWeight, projBias);
    outputs.front().value = logits;
    if (config.logSoftmax)
      outputs.front() = {"log_probs",
                         LogSoftmaxOp::create(builder, loc, logits)};
    if (config.train)
      outputs.front() = {"loss",
                         CrossEntropyOp::create(builder, loc, logits, args[1])};
    return outputs;
  });
}

OwningOpRef<ModuleOp>
mlir::recur::buildLstmStack(MLIRContext &context,
                            const LstmStackConfig &config) {
  assert(validate(config).empty() && "invalid LSTM stack configuration");
  ModelBuilder model(context, config);
  model.addInput(
      "input", sequenceType(config, {model.seq(), model.batch(), config.input},
                            model.floats()));
  addLengthsInput(model, config);
  addStateInputs(model, config, config.hidden, config.layers);
  addRecurrentWeights(model, config, "", config.input, config.hidden,
                      config.layers);

  OwningOpRef<ModuleOp> module = model.build(
      cellName(config.cell), [&](OpBuilder &builder, ValueRange args) {
        Location loc = builder.getUnknownLoc();
        int64_t directions = directionSuffixes(config).size();
        Value lengths = config.lengths ? args[1] : Value();
        int64_t first = config.lengths ? 2 : 1;
        ValueRange state =
            args.slice(first, config.state ? statesOf(config.cell) *
                                                 directions * config.layers
                                           : 0);
        Value x = args[0];
        if (config.batchFirst)
          x = swapTimeAndBatch(builder, loc, x);
        SmallVector<ModelBuilder::Output> outputs = buildLstmLayers(
            builder, loc, config, config.layers, x,
            args.drop_front(first + state.size()), state, lengths, "output",
            /*keepLast=*/false);
        if (config.batchFirst)
          outputs.front().value =
              swapTimeAndBatch(builder, loc, outputs.front().value);
        return outputs;
      });
  return module;
}
