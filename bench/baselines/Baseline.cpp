//===- Baseline.cpp - shared plumbing of the C++ benchmark baselines ------===//

#include "Baseline.h"

#include "Safetensors.h"
#include "Shapes.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace st = recur::safetensors;
using recur::formatShape;

namespace bench {

void die(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

void unavailable(const std::string &reason) {
  std::cout << nlohmann::json{{"unavailable", reason}}.dump() << std::endl;
  std::exit(0);
}

Options parseOptions(int argc, char **argv, const char *usage) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc)
      die(arg + " needs a value\n" + usage);
    std::string value = argv[++i];
    auto real = [&](double min) {
      char *end = nullptr;
      double parsed = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(parsed >= min))
        die(arg + " needs a number of at least " + std::to_string(min) +
            ", got '" + value + "'");
      return parsed;
    };
    auto count = [&](int min) {
      char *end = nullptr;
      long parsed = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || parsed < min)
        die(arg + " needs an integer of at least " + std::to_string(min) +
            ", got '" + value + "'");
      return static_cast<int>(parsed);
    };
    if (arg == "--weights")
      options.weights = value;
    else if (arg == "--inputs")
      options.inputs = value;
    else if (arg == "--outputs")
      options.outputs = value;
    else if (arg == "--precision")
      options.precision = value;
    else if (arg == "--warmup")
      options.warmup = count(0);
    else if (arg == "--iters")
      options.iters = count(1);
    else if (arg == "--lr") {
      options.lr = real(0);
      options.training = true;
    } else if (arg == "--clip-norm")
      options.clipNorm = real(0);
    else
      die("unknown option '" + arg + "'\n" + usage);
  }
  if (options.weights.empty() || options.inputs.empty() ||
      options.outputs.empty())
    die(std::string("give --weights, --inputs and --outputs\n") + usage);
  if (options.clipNorm > 0 && !options.training)
    die(std::string("--clip-norm belongs to a training step: give --lr\n") +
        usage);
  return options;
}

namespace {

std::unique_ptr<st::File> open(const std::string &path) {
  std::string error;
  auto file = st::File::open(path, error);
  if (!file)
    die(error);
  return file;
}

/// The f32 tensor `name` of `file`, which must have `shape`.
Tensor read(const st::File &file, const std::string &path,
            const std::string &name, const std::vector<int64_t> &shape) {
  const st::Entry *entry = file.find(name);
  if (!entry)
    die("'" + path + "' has no tensor '" + name + "'");
  if (entry->dtype != "F32" || entry->shape != shape)
    die("tensor '" + name + "' in '" + path + "' is " + entry->dtype + " " +
        formatShape(entry->shape) + ", expected F32 " + formatShape(shape));
  Tensor tensor{shape, std::vector<float>(entry->numElements())};
  std::memcpy(tensor.data.data(), entry->data, entry->size);
  return tensor;
}

/// The I64 ids of `entry`, each checked to lie in [0, vocab).
std::vector<int64_t> readIds(const st::Entry &entry, const std::string &what,
                             int64_t vocab) {
  std::vector<int64_t> ids(entry.numElements());
  std::memcpy(ids.data(), entry.data, entry.size);
  for (int64_t id : ids)
    if (id < 0 || id >= vocab)
      die(what + " " + std::to_string(id) + " outside [0, " +
          std::to_string(vocab) + ")");
  return ids;
}

} // namespace

Model Model::load(const Options &options) {
  auto weights = open(options.weights);
  auto inputs = open(options.inputs);
  Model model;
  const st::Entry *embedding = weights->find("embedding.weight");
  model.languageModel = embedding != nullptr;
  // An LM names its layers after their cell (lstm., gru.); a bare stack's
  // cell shows in its weights' rows: 4H for an LSTM, 3H for a GRU.
  std::string prefix = !model.languageModel                ? ""
                       : weights->find("gru.weight_hh_l0") ? "gru."
                                                           : "lstm.";
  const st::Entry *first = weights->find(prefix + "weight_hh_l0");
  if (!first || first->shape.size() != 2)
    die("'" + options.weights + "' has no 2-D " + prefix + "weight_hh_l0");
  model.hidden = first->shape[1];
  model.gates = model.hidden ? first->shape[0] / model.hidden : 0;
  if ((model.gates != 4 && model.gates != 3) ||
      first->shape[0] != model.gates * model.hidden ||
      (prefix == "gru." && model.gates != 3) ||
      (prefix == "lstm." && model.gates != 4))
    die("'" + options.weights + "': " + prefix + "weight_hh_l0 has shape " +
        formatShape(first->shape) +
        ", expected [4H, H] (an LSTM) or [3H, H] (a GRU)");
  int64_t h4 = model.gates * model.hidden;

  if (model.languageModel) {
    if (embedding->shape.size() != 2)
      die("embedding.weight must be 2-D [V, E]");
    model.vocab = embedding->shape[0];
    model.inputSize = embedding->shape[1];
    model.embedding =
        read(*weights, options.weights, "embedding.weight", embedding->shape);
    const st::Entry *tokens = inputs->find("tokens");
    if (!tokens || tokens->dtype != "I64" || tokens->shape.size() != 2)
      die("'" + options.inputs + "' needs I64 tokens [T, B]");
    model.seq = tokens->shape[0];
    model.batch = tokens->shape[1];
    model.tokens = readIds(*tokens, "token", model.vocab);
    model.outputName = "logits";
    if (options.training) {
      const st::Entry *targets = inputs->find("targets");
      if (!targets || targets->dtype != "I64" ||
          targets->shape != tokens->shape)
        die("'" + options.inputs + "' needs I64 targets " +
            formatShape(tokens->shape) + " for a training step");
      model.targets = readIds(*targets, "target", model.vocab);
    }
  } else {
    if (options.training)
      die("a training step needs a language model (embedding.weight)");
    const st::Entry *input = inputs->find("input");
    if (!input || input->shape.size() != 3)
      die("'" + options.inputs + "' needs F32 input [T, B, I]");
    model.input = read(*inputs, options.inputs, "input", input->shape);
    model.seq = input->shape[0];
    model.batch = input->shape[1];
    model.inputSize = input->shape[2];
    model.outputName = "output";
  }
  for (int64_t k = 0; weights->find(prefix + "weight_ih_l" + std::to_string(k));
       ++k) {
    std::string suffix = "_l" + std::to_string(k);
    int64_t size = k == 0 ? model.inputSize : model.hidden;
    model.layers.push_back(
        {read(*weights, options.weights, prefix + "weight_ih" + suffix,
              {h4, size}),
         read(*weights, options.weights, prefix + "weight_hh" + suffix,
              {h4, model.hidden}),
         read(*weights, options.weights, prefix + "bias_ih" + suffix, {h4}),
         read(*weights, options.weights, prefix + "bias_hh" + suffix, {h4})});
  }
  if (model.languageModel) {
    model.projWeight = read(*weights, options.weights, "proj.weight",
                            {model.vocab, model.hidden});
    model.projBias =
        read(*weights, options.weights, "proj.bias", {model.vocab});
  }
  return model;
}

std::vector<int64_t> Model::outputShape() const {
  return {seq, batch, languageModel ? vocab : hidden};
}

void writeOutput(const Options &options, const Model &model,
                 const float *data) {
  writeOutputs(options, {{model.outputName, model.outputShape(), data}});
}

void writeOutputs(const Options &options,
                  const std::vector<NamedTensor> &tensors) {
  st::Writer writer;
  std::string error;
  for (const NamedTensor &tensor : tensors) {
    size_t bytes = sizeof(float);
    for (int64_t size : tensor.shape)
      bytes *= size;
    if (!writer.add(tensor.name, "F32", tensor.shape, tensor.data, bytes,
                    error))
      die(error);
  }
  if (!writer.write(options.outputs, error))
    die(error);
}

std::vector<double> timeBatches(const Options &options,
                                const std::function<void()> &batch) {
  std::vector<double> times;
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    batch();
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (i >= options.warmup)
      times.push_back(elapsed.count());
  }
  return times;
}

void report(const std::vector<double> &timesMs, double compileSeconds,
            const nlohmann::json &versions,
            const std::vector<std::string> &notes,
            const nlohmann::json &extra) {
  nlohmann::json result = {{"times_ms", timesMs},
                           {"compile_s", compileSeconds},
                           {"versions", versions},
                           {"notes", notes}};
  result.update(extra);
  std::cout << result.dump() << std::endl;
}

} // namespace bench
