//===- Interpreter.cpp - run a model's program on the reference ops -------===//

#include "reference/Interpreter.h"
#include "reference/Training.h"

#include <optional>
#include <stdexcept>

using namespace recur::reference;
using nlohmann::json;

namespace {
class Environment {
public:
  explicit Environment(const std::map<std::string, Value> &arguments)
      : values(arguments.begin(), arguments.end()) {}

  const Value *optional(const json &name) const {
    if (name.is_null())
      return nullptr;
    auto found = values.find(name.get<std::string>());
    if (found == values.end())
      throw std::invalid_argument("program uses '" + name.get<std::string>() +
                                  "', which has no value");
    return &found->second;
  }
  const Value &required(const json &name) const {
    if (const Value *value = optional(name))
      return *value;
    throw std::invalid_argument("program leaves a required operand out");
  }
  const FloatTensor &floats(const json &name) const {
    return std::get<FloatTensor>(required(name));
  }
  const FloatTensor *optionalFloats(const json &name) const {
    const Value *value = optional(name);
    return value ? &std::get<FloatTensor>(*value) : nullptr;
  }
  /// An optional float operand by its ODS name, in double precision (as
  /// the training reference computes), or nothing when absent.
  std::optional<DoubleTensor> optionalDoubles(const json &operands,
                                              const char *name) const {
    const FloatTensor *value = optionalFloats(operands.value(name, json()));
    return value ? std::optional(toDouble(*value)) : std::nullopt;
  }
  const IdTensor &ids(const json &name) const {
    return std::get<IdTensor>(required(name));
  }
  const IdTensor *optionalIds(const json &name) const {
    const Value *value = optional(name);
    return value ? &std::get<IdTensor>(*value) : nullptr;
  }
  void define(const json &name, Value value) {
    values[name.get<std::string>()] = std::move(value);
  }

private:
  std::map<std::string, Value> values;
};

Reduction parseReduction(const std::string &name) {
  if (name == "none")
    return Reduction::None;
  if (name == "sum")
    return Reduction::Sum;
  if (name == "mean")
    return Reduction::Mean;
  throw std::invalid_argument("unknown reduction '" + name + "'");
}
/// The tensor in `value`, or null.
const DoubleTensor *pointer(const std::optional<DoubleTensor> &value) {
  return value ? &*value : nullptr;
}
} // namespace

std::vector<Value>
recur::reference::interpret(const json &program,
                            const std::map<std::string, Value> &arguments) {
  Environment env(arguments);
  try {
    for (const json &op : program.at("ops")) {
      const std::string name = op.at("op");
      const json &in = op.at("operands");
      const json &out = op.at("results");
      // Operands by their ODS names (absent optional ones are null).
      if (name == "embedding") {
        env.define(out.at(0), embedding(env.floats(in.at("table")),
                                        env.ids(in.at("ids"))));
      } else if (name == "lstm") {
        LstmResult result = lstm(
            env.floats(in.at("input")), env.floats(in.at("w_ih")),
            env.floats(in.at("w_hh")), env.optionalFloats(in.at("b_ih")),
            env.optionalFloats(in.at("b_hh")), env.optionalFloats(in.at("h0")),
            env.optionalFloats(in.at("c0")), op.value("reverse", false),
            // Programs from before proj_size have no "w_hr".
            env.optionalFloats(in.value("w_hr", json())),
            env.optionalIds(in.value("lengths", json())));
        env.define(out.at(0), std::move(result.y));
        env.define(out.at(1), std::move(result.hN));
        env.define(out.at(2), std::move(result.cN));
      } else if (name == "gru" || name == "rnn_tanh" || name == "rnn_relu") {
        RnnCell cell = name == "gru"        ? RnnCell::Gru
                       : name == "rnn_tanh" ? RnnCell::Tanh
                                            : RnnCell::Relu;
        RnnResult result =
            rnn(cell, env.floats(in.at("input")), env.floats(in.at("w_ih")),
                env.floats(in.at("w_hh")), env.optionalFloats(in.at("b_ih")),
                env.optionalFloats(in.at("b_hh")),
                env.optionalFloats(in.at("h0")), op.value("reverse", false),
                env.optionalIds(in.value("lengths", json())));
        env.define(out.at(0), std::move(result.y));
        env.define(out.at(1), std::move(result.hN));
      } else if (name == "rnn") {
        std::vector<const FloatTensor *> init, captures;
        for (const json &value : in.at("init"))
          init.push_back(&env.floats(value));
        for (const json &value : in.at("captures"))
          captures.push_back(&env.floats(value));
        std::vector<FloatTensor> results =
            rnnRegion(op.at("cell"), env.floats(in.at("input")), init, captures,
                      op.value("reverse", false), op.at("output_size"),
                      env.optionalIds(in.value("lengths", json())));
        for (size_t k = 0; k < results.size(); ++k)
          env.define(out.at(k), std::move(results[k]));
      } else if (name == "lstm_grad") {
        // In double precision, as the training reference computes.
        auto optional = [&](const char *operand) {
          return env.optionalDoubles(in, operand);
        };
        DoubleTensor input = toDouble(env.floats(in.at("input")));
        DoubleTensor wIh = toDouble(env.floats(in.at("w_ih")));
        DoubleTensor wHh = toDouble(env.floats(in.at("w_hh")));
        DoubleTensor y = toDouble(env.floats(in.at("y")));
        int64_t gates = wHh.dim(0);
        std::optional<DoubleTensor> bIh = optional("b_ih"),
                                    bHh = optional("b_hh"),
                                    dY = optional("d_y"), h0 = optional("h0"),
                                    c0 = optional("c0"),
                                    dHN = optional("d_h_n"),
                                    dCN = optional("d_c_n");
        LstmGradients result =
            lstmGrad(input, wIh, wHh, bIh ? *bIh : DoubleTensor({gates}),
                     bHh ? *bHh : DoubleTensor({gates}), y,
                     dY ? *dY : DoubleTensor(y.shape), pointer(h0), pointer(c0),
                     pointer(dHN), pointer(dCN),
                     env.optionalIds(in.value("lengths", json())));
        DoubleTensor *values[] = {&result.dInput, &result.dWIh, &result.dWHh,
                                  &result.dBias,  &result.dH0,  &result.dC0};
        for (size_t k = 0; k < std::size(values); ++k)
          env.define(out.at(k), toFloat(*values[k]));
      } else if (name == "gru_grad") {
        auto optional = [&](const char *operand) {
          return env.optionalDoubles(in, operand);
        };
        std::optional<DoubleTensor> bIh = optional("b_ih"),
                                    bHh = optional("b_hh"),
                                    dY = optional("d_y"), h0 = optional("h0"),
                                    dHN = optional("d_h_n");
        GruGradients result = gruGrad(
            toDouble(env.floats(in.at("input"))),
            toDouble(env.floats(in.at("w_ih"))),
            toDouble(env.floats(in.at("w_hh"))), pointer(bIh), pointer(bHh),
            toDouble(env.floats(in.at("y"))), pointer(dY), pointer(h0),
            pointer(dHN), env.optionalIds(in.value("lengths", json())));
        DoubleTensor *values[] = {&result.dInput, &result.dWIh, &result.dWHh,
                                  &result.dBIh,   &result.dBHh, &result.dH0};
        for (size_t k = 0; k < std::size(values); ++k)
          env.define(out.at(k), toFloat(*values[k]));
      } else if (name == "rnn_grad") {
        std::optional<DoubleTensor> dY = env.optionalDoubles(in, "d_y"),
                                    h0 = env.optionalDoubles(in, "h0"),
                                    dHN = env.optionalDoubles(in, "d_h_n");
        RnnGradients result =
            rnnGrad(toDouble(env.floats(in.at("input"))),
                    toDouble(env.floats(in.at("w_ih"))),
                    toDouble(env.floats(in.at("w_hh"))),
                    toDouble(env.floats(in.at("y"))), pointer(dY), pointer(h0),
                    pointer(dHN), env.optionalIds(in.value("lengths", json())),
                    op.value("relu", false));
        DoubleTensor *values[] = {&result.dInput, &result.dWIh, &result.dWHh,
                                  &result.dBias, &result.dH0};
        for (size_t k = 0; k < std::size(values); ++k)
          env.define(out.at(k), toFloat(*values[k]));
      } else if (name == "linear_grad") {
        LinearGradients result =
            linearGrad(toDouble(env.floats(in.at("d_result"))),
                       toDouble(env.floats(in.at("input"))),
                       toDouble(env.floats(in.at("weight"))));
        env.define(out.at(0), toFloat(result.dInput));
        env.define(out.at(1), toFloat(result.dWeight));
        env.define(out.at(2), toFloat(result.dBias));
      } else if (name == "embedding_grad") {
        env.define(out.at(0), toFloat(embeddingGrad(
                                  toDouble(env.floats(in.at("d_result"))),
                                  env.ids(in.at("ids")), op.at("rows"))));
      } else if (name == "linear") {
        env.define(out.at(0), linear(env.floats(in.at("input")),
                                     env.floats(in.at("weight")),
                                     env.optionalFloats(in.at("bias"))));
      } else if (name == "transpose") {
        std::vector<int64_t> permutation = op.at("permutation");
        const Value &input = env.required(in.at("input"));
        if (const auto *ids = std::get_if<IdTensor>(&input))
          env.define(out.at(0), transpose(*ids, permutation));
        else
          env.define(out.at(0),
                     transpose(std::get<FloatTensor>(input), permutation));
      } else if (name == "concat") {
        std::vector<const FloatTensor *> inputs;
        for (const json &input : in.at("inputs"))
          inputs.push_back(&env.floats(input));
        env.define(out.at(0), concat(inputs, op.at("dim")));
      } else if (name == "tensor") {
        // Slices, sums and generics between the recur ops (a backward's).
        std::vector<const FloatTensor *> inputs;
        for (const json &input : in.at("inputs"))
          inputs.push_back(&env.floats(input));
        std::vector<FloatTensor> results =
            tensorProgram(op.at("program"), inputs);
        for (size_t k = 0; k < results.size(); ++k)
          env.define(out.at(k), std::move(results[k]));
      } else if (name == "log_softmax") {
        env.define(out.at(0), logSoftmax(env.floats(in.at("input"))));
      } else if (name == "cross_entropy") {
        env.define(out.at(0),
                   crossEntropy(env.floats(in.at("logits")),
                                env.ids(in.at("targets")),
                                parseReduction(op.value("reduction", "mean"))));
      } else {
        throw std::invalid_argument("the reference has no op '" + name + "'");
      }
    }
    std::vector<Value> outputs;
    for (const json &name : program.at("outputs"))
      outputs.push_back(env.required(name));
    return outputs;
  } catch (const json::exception &error) {
    throw std::invalid_argument(std::string("malformed program: ") +
                                error.what());
  } catch (const std::bad_variant_access &) {
    throw std::invalid_argument(
        "program passes an integer tensor where floats are expected, or the "
        "reverse");
  }
}
