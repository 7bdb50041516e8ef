//===- recur-run.cpp - run, check and time a compiled Recur model ---------===//
//
//   recur-run libmodel.so (--weights w.safetensors | --random-weights SEED)
//             [--inputs in.safetensors] [--outputs out.safetensors]
//             [--batch B --seq T] [--threads N] [--warmup K --iters N]
//             [--check] [--tolerance X] [--json] [--seed S]
//             [--save-weights w.safetensors] [--save-reference ref.safetensors]
//   recur-run libtrain.so ... --steps N   (a training step: recur-gen --train)
//
// Links librecur-runtime and the reference library only (no MLIR or LLVM).
//
//===----------------------------------------------------------------------===//

#include "recur/runtime.h"

#include "Dtypes.h"
#include "Safetensors.h"
#include "Shapes.h"
#include "reference/Interpreter.h"
#include "reference/Training.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

using nlohmann::json;
namespace st = recur::safetensors;
namespace ref = recur::reference;
using recur::elementBytes;

namespace {

constexpr const char *kUsage =
    "usage: recur-run libmodel.so (--weights w.safetensors | --random-weights "
    "SEED)\n"
    "                 [--inputs in.safetensors] [--outputs out.safetensors]\n"
    "                 [--batch B --seq T] [--threads N] [--warmup K --iters "
    "N]\n"
    "                 [--check] [--tolerance X] [--json] [--seed S]\n"
    "                 [--non-strict] [--convert-weights] [--save-weights "
    "w.safetensors]\n"
    "                 [--save-reference ref.safetensors] [--steps N]\n"
    "       recur-run --cuda-check\n"
    "Runs a model compiled by recur-compile. Weights are bound strictly "
    "(every\n"
    "tensor in the file is a weight of the model and every weight is there)\n"
    "unless --non-strict; --convert-weights rounds F32 weights to a bf16\n"
    "model's bf16. --inputs must hold every input of the model, with\n"
    "sizes that agree with --seq/--batch if given; without --inputs, inputs\n"
    "are drawn at random with --seed (default: the --random-weights seed,\n"
    "else 0). --check\n"
    "compares every output with the reference implementation and fails past\n"
    "|got - want| <= X * (1 + |want|) (default X = 1e-4; 2^-7 for bf16\n"
    "outputs or bf16 GEMMs, 2^-9 for tf32: see --precision); the relative "
    "error\n"
    "it prints is over elements with |want| >= 1e-3. --save-reference writes\n"
    "the reference's outputs (computed in double, stored as f32) the way\n"
    "--outputs writes the model's. CUDA models (recur-compile --target=cuda)\n"
    "run on device 0, or RECUR_CUDA_DEVICE; --cuda-check says whether this\n"
    "machine can run them (exit 0) or why not (exit 77).\n"
    "A training step (recur-gen --train) runs --steps N times (default 1)\n"
    "instead of --warmup/--iters, each run one SGD step on the same inputs\n"
    "that updates the weights in place; it prints every step's loss and time,\n"
    "--outputs holds each output stacked over the steps (loss [N]),\n"
    "--save-weights the weights after the last step, and --check compares the\n"
    "first step's loss and gradients (read off the weights' change) with the\n"
    "reference.\n";

struct Options {
  std::string model;
  std::optional<std::string> weights, inputs, outputs, saveWeights,
      saveReference;
  std::optional<uint64_t> randomWeights, seed;
  std::optional<int64_t> batch, seq;
  std::optional<int> threads;
  // Unset: 1 warmup and 3 timed runs of an inference model, 1 step of a
  // training model (which takes --steps only).
  std::optional<int> warmup, iters, steps;
  bool check = false, json = false, nonStrict = false, convertWeights = false;
  std::optional<double> tolerance; // else per output's dtype
};

[[noreturn]] void die(const std::string &message, int code = 1) {
  std::fprintf(stderr, "recur-run: error: %s\n", message.c_str());
  std::exit(code);
}

int64_t parseInteger(const std::string &flag, const char *text, int64_t min,
                     int64_t max = std::numeric_limits<int64_t>::max()) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || end == text || *end || value < min || value > max)
    die(flag + " needs an integer " +
        (max == std::numeric_limits<int64_t>::max()
             ? "of at least " + std::to_string(min)
             : "from " + std::to_string(min) + " to " + std::to_string(max)) +
        ", got '" + text + "'");
  return value;
}

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--cuda-check") {
      // For scripts: can this machine run CUDA models? (77: skip, as ctest.)
      RecurError *error = recur_cuda_check();
      std::printf("cuda: %s\n",
                  error ? recur_error_message(error) : "available");
      recur_error_free(error);
      std::exit(error ? 77 : 0);
    } else if (arg == "--weights") {
      options.weights = value();
    } else if (arg == "--random-weights") {
      options.randomWeights = parseInteger(arg, value(), 0);
    } else if (arg == "--inputs") {
      options.inputs = value();
    } else if (arg == "--outputs") {
      options.outputs = value();
    } else if (arg == "--save-weights") {
      options.saveWeights = value();
    } else if (arg == "--save-reference") {
      options.saveReference = value();
    } else if (arg == "--batch") {
      options.batch = parseInteger(arg, value(), 1);
    } else if (arg == "--seq") {
      options.seq = parseInteger(arg, value(), 1);
    } else if (arg == "--threads") {
      // Any int is passed on: the runtime's error names its range.
      options.threads =
          static_cast<int>(parseInteger(arg, value(), 0, kIntMax));
    } else if (arg == "--warmup") {
      options.warmup = static_cast<int>(parseInteger(arg, value(), 0, kIntMax));
    } else if (arg == "--iters") {
      options.iters = static_cast<int>(parseInteger(arg, value(), 1, kIntMax));
    } else if (arg == "--steps") {
      options.steps = static_cast<int>(parseInteger(arg, value(), 1, kIntMax));
    } else if (arg == "--seed") {
      options.seed = parseInteger(arg, value(), 0);
    } else if (arg == "--tolerance") {
      char *end = nullptr;
      const char *text = value();
      options.tolerance = std::strtod(text, &end);
      if (end == text || *end || !(*options.tolerance > 0))
        die("--tolerance needs a positive number, got '" + std::string(text) +
            "'");
    } else if (arg == "--check") {
      options.check = true;
    } else if (arg == "--non-strict") {
      options.nonStrict = true;
    } else if (arg == "--convert-weights") {
      options.convertWeights = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (!arg.empty() && arg[0] == '-') {
      die("unknown option '" + arg + "'\n" + kUsage);
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      die("more than one model given ('" + options.model + "', '" + arg + "')");
    }
  }
  if (options.model.empty())
    die(std::string("no model given\n") + kUsage);
  if (options.weights.has_value() == options.randomWeights.has_value())
    die("give exactly one of --weights FILE and --random-weights SEED");
  return options;
}

void check(RecurError *error, int code = 1) {
  if (!error)
    return;
  std::string message = recur_error_message(error);
  recur_error_free(error);
  die(message, code);
}

/// A host tensor owned by recur-run, in the model's dtype.
struct HostTensor {
  std::string name;
  RecurTensorInfo info{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  DLTensor view() {
    DLTensor tensor{};
    tensor.data = bytes.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = info.dtype;
    tensor.shape = shape.data();
    return tensor;
  }
  int64_t count() const {
    int64_t n;
    if (!recur::checkedElementCount(shape, n))
      die("tensor '" + name + "' has shape " + ref::formatShape(shape) +
          ", whose element count does not fit in 64 bits");
    return n;
  }
};

using recur::isBf16;
using recur::isF32;
bool isI64(DLDataType t) { return t.code == kDLInt && t.bits == 64; }
bool isFloat(DLDataType t) { return isF32(t) || isBf16(t); }

/// Element `i` of an f32 or bf16 buffer.
float floatAt(const void *data, DLDataType dtype, size_t i) {
  if (isBf16(dtype))
    return recur::bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  return static_cast<const float *>(data)[i];
}

std::string safetensorsName(DLDataType t) {
  const recur::Dtype *dtype = recur::findDtype(t);
  return dtype ? dtype->safetensors : recur::describeDtype(t);
}

/// Random values: weights uniform in [-k, k] with k = 1/sqrt(last dim) (0.1
/// for vectors), float inputs uniform in [-1, 1], index inputs uniform in
/// [0, bound).
void fillRandom(HostTensor &tensor, std::mt19937_64 &rng, bool isWeight) {
  int64_t n = tensor.count(), bytes;
  if (!recur::checkedByteCount(
          tensor.shape, static_cast<int64_t>(elementBytes(tensor.info.dtype)),
          bytes))
    die("tensor '" + tensor.name + "' has shape " +
        ref::formatShape(tensor.shape) +
        ", whose size in bytes does not fit in 64 bits");
  try {
    tensor.bytes.resize(bytes);
  } catch (const std::bad_alloc &) {
    die("out of memory making random values for '" + tensor.name +
        "' of shape " + ref::formatShape(tensor.shape) + " (" +
        std::to_string(bytes) + " bytes)");
  } catch (const std::length_error &) {
    die("tensor '" + tensor.name + "' of shape " +
        ref::formatShape(tensor.shape) + " is too large (" +
        std::to_string(bytes) + " bytes)");
  }
  if (isI64(tensor.info.dtype)) {
    int64_t bound = tensor.info.index_bound > 0 ? tensor.info.index_bound : 100;
    std::uniform_int_distribution<int64_t> pick(0, bound - 1);
    auto *data = reinterpret_cast<int64_t *>(tensor.bytes.data());
    for (int64_t i = 0; i < n; ++i)
      data[i] = pick(rng);
    return;
  }
  if (!isFloat(tensor.info.dtype))
    die("cannot make random values for '" + tensor.name +
        "': recur-run handles f32, bf16 and i64 tensors");
  double k = 1.0;
  if (isWeight)
    k = tensor.shape.size() >= 2 ? 1.0 / std::sqrt(double(tensor.shape.back()))
                                 : 0.1;
  std::uniform_real_distribution<float> pick(-k, k);
  if (isBf16(tensor.info.dtype)) {
    auto *data = reinterpret_cast<uint16_t *>(tensor.bytes.data());
    for (int64_t i = 0; i < n; ++i)
      data[i] = recur::floatToBf16(pick(rng));
    return;
  }
  auto *data = reinterpret_cast<float *>(tensor.bytes.data());
  for (int64_t i = 0; i < n; ++i)
    data[i] = pick(rng);
}

ref::Value toReference(const HostTensor &tensor) {
  if (isFloat(tensor.info.dtype)) {
    ref::FloatTensor value(tensor.shape);
    for (size_t i = 0; i < value.data.size(); ++i)
      value.data[i] = floatAt(tensor.bytes.data(), tensor.info.dtype, i);
    return value;
  }
  if (isI64(tensor.info.dtype)) {
    ref::IdTensor value(tensor.shape);
    std::memcpy(value.data.data(), tensor.bytes.data(), tensor.bytes.size());
    return value;
  }
  die("--check handles f32, bf16 and i64 tensors; '" + tensor.name +
      "' is none of them");
}

struct Comparison {
  double maxAbs = 0, maxRel = 0;
  /// NaN or infinite elements, in the output and in the reference.
  int64_t nonFinite = 0, nonFiniteReference = 0;
  bool pass = true;
};

Comparison compare(const DLTensor &got, const ref::FloatTensor &want,
                   double tolerance) {
  Comparison result;
  const void *data = static_cast<const char *>(got.data) + got.byte_offset;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double value = floatAt(data, got.dtype, i);
    double expected = want.data[i], diff = std::fabs(value - expected);
    if (!(diff <= tolerance * (1 + std::fabs(expected))))
      result.pass = false;
    // std::max would drop a NaN difference; count them instead.
    result.nonFinite += !std::isfinite(value);
    result.nonFiniteReference += !std::isfinite(expected);
    if (!std::isfinite(diff))
      continue;
    result.maxAbs = std::max(result.maxAbs, diff);
    // Relative error is only meaningful away from zero.
    if (std::fabs(expected) >= 1e-3)
      result.maxRel = std::max(result.maxRel, diff / std::fabs(expected));
  }
  return result;
}

HostTensor makeTensor(const RecurTensorInfo &info) {
  HostTensor tensor;
  tensor.name = info.name;
  tensor.info = info;
  tensor.shape.assign(info.shape, info.shape + info.ndim);
  return tensor;
}

/// Bytes of a (valid, contiguous) tensor the runtime returned.
size_t byteSize(const DLTensor &tensor) {
  size_t count = 1;
  for (int d = 0; d < tensor.ndim; ++d)
    count *= static_cast<size_t>(tensor.shape[d]);
  return count * elementBytes(tensor.dtype);
}

std::string formatFloat(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

/// The model's current value of each weight in `bound` (as bound, or as the
/// last training step left it).
std::vector<HostTensor> readWeights(RecurModel *model,
                                    const std::vector<HostTensor> &bound) {
  std::vector<HostTensor> current = bound;
  for (HostTensor &weight : current) {
    DLTensor view = weight.view();
    check(recur_model_read_weight(model, weight.name.c_str(), &view));
  }
  return current;
}

const HostTensor &findTensor(const std::vector<HostTensor> &tensors,
                             const std::string &name) {
  for (const HostTensor &tensor : tensors)
    if (tensor.name == name)
      return tensor;
  die("--check: the model has no tensor '" + name + "'");
}

/// The gradients a training step's first step applies, by the reference
/// (runtime/reference/Training.h: double precision, clipped as the step
/// clips), from the weights as bound.
ref::DoubleTensors referenceGradients(const json &training,
                                      const std::vector<HostTensor> &before,
                                      const std::vector<HostTensor> &inputs) {
  std::map<std::string, ref::FloatTensor> weights;
  for (const HostTensor &weight : before)
    weights[weight.name] = std::get<ref::FloatTensor>(toReference(weight));
  auto ids = [&](const char *name) {
    const HostTensor &input = findTensor(inputs, name);
    if (!isI64(input.info.dtype))
      die(std::string("--check: the training step's input '") + name +
          "' is not i64");
    return std::get<ref::IdTensor>(toReference(input));
  };
  double clipNorm = training.value("clip_norm", 0.0);
  ref::LossGradients expected;
  try {
    expected = ref::lstmLmLossGradients(ref::toDouble(weights), ids("tokens"),
                                        ids("targets"));
  } catch (const std::exception &error) {
    die(std::string("--check: the gradient reference (an LSTM LM's, "
                    "recur-gen lstm-lm --train) failed: ") +
        error.what());
  }
  if (clipNorm > 0)
    ref::clipGradientNorm(expected.gradients, clipNorm);
  return expected.gradients;
}

/// A training step's gradients, read off its first step's change of each
/// updated weight (g = (before - after) / lr), against the reference's. An
/// element passes within `tolerance` times the weight's largest reference
/// gradient, plus one f32 ulp of the new weight over lr: the part of the
/// step an f32 weight cannot hold.
json checkGradients(const json &training, const ref::DoubleTensors &gradients,
                    const std::vector<HostTensor> &before,
                    const std::vector<HostTensor> &after, double tolerance) {
  double lr = training.at("lr");
  json entries = json::array();
  for (const std::string name : training.at("updates")) {
    const HostTensor &old = findTensor(before, name);
    const HostTensor &updated = findTensor(after, name);
    const ref::DoubleTensor &want = gradients.at(name);
    const auto *oldData = reinterpret_cast<const float *>(old.bytes.data());
    const auto *newData = reinterpret_cast<const float *>(updated.bytes.data());
    double largest = 0, maxAbs = 0;
    for (double value : want.data)
      largest = std::max(largest, std::fabs(value));
    bool pass = true;
    for (size_t i = 0; i < want.data.size(); ++i) {
      double got = (double(oldData[i]) - double(newData[i])) / lr;
      double diff = std::fabs(got - want.data[i]);
      double ulp = std::fabs(double(newData[i])) * 0x1p-23 / lr;
      pass &= diff <= tolerance * largest + ulp; // false on NaN
      if (std::isfinite(diff))
        maxAbs = std::max(maxAbs, diff);
    }
    entries.push_back({{"name", "gradient of " + name},
                       {"kind", "gradient"},
                       {"tolerance", tolerance},
                       {"max_abs_error", maxAbs},
                       {"largest_gradient", largest},
                       {"pass", pass}});
  }
  return entries;
}

} // namespace

static int runMain(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  RecurModel *model = nullptr;
  check(recur_model_load(options.model.c_str(), &model));
  // A CUDA model's timed runs leave their outputs on the device, as a GPU
  // application's would; one more run brings them to the host for saving and
  // checking.
  json description = json::parse(recur_model_description(model));
  // Of the GEMMs' products; the default --check tolerance depends on it.
  std::string precision = description.value("precision", "fp32");
  bool onGpu = description.value("target", "cpu") == "cuda";
  bool trains = description.contains("training");
  if (trains && (options.warmup || options.iters))
    die("'" + options.model +
        "' is a training step: every run changes its weights, so it takes "
        "--steps N, not --warmup/--iters");
  if (!trains && options.steps)
    die("--steps: '" + options.model +
        "' is not a training step (recur-gen --train); time it with --warmup "
        "K --iters N");
  int warmup = trains ? 0 : options.warmup.value_or(1);
  int timed = trains ? options.steps.value_or(1) : options.iters.value_or(3);

  // Weights: from a file, or random and kept here for --check.
  std::vector<HostTensor> weights;
  size_t numWeights = recur_model_num_tensors(model, RECUR_WEIGHT);
  if (options.weights) {
    int mode = (options.nonStrict ? RECUR_BIND_NON_STRICT : RECUR_BIND_STRICT) |
               (options.convertWeights ? RECUR_BIND_CONVERT_TO_BF16 : 0);
    check(recur_model_bind_weights_file_mode(model, options.weights->c_str(),
                                             mode));
    if (options.check || options.saveReference) {
      std::string error;
      auto file = st::File::open(*options.weights, error);
      if (!file)
        die(error);
      for (size_t i = 0; i < numWeights; ++i) {
        RecurTensorInfo info;
        check(recur_model_tensor_info(model, RECUR_WEIGHT, i, &info));
        HostTensor tensor = makeTensor(info);
        const st::Entry *entry = file->find(info.name);
        if (!entry)
          die("weight '" + tensor.name + "' is not in '" + *options.weights +
              "' (--non-strict binds only what is there)");
        // What the model bound: rounded where it converted.
        if (options.convertWeights && entry->dtype == "F32" &&
            isBf16(info.dtype))
          tensor.bytes = recur::floatsToBf16Bytes(entry->data,
                                                  entry->size / sizeof(float));
        else
          tensor.bytes.assign(entry->data, entry->data + entry->size);
        weights.push_back(std::move(tensor));
      }
    }
  } else {
    std::mt19937_64 rng(*options.randomWeights);
    for (size_t i = 0; i < numWeights; ++i) {
      RecurTensorInfo info;
      check(recur_model_tensor_info(model, RECUR_WEIGHT, i, &info));
      HostTensor tensor = makeTensor(info);
      fillRandom(tensor, rng, /*isWeight=*/true);
      DLTensor view = tensor.view();
      check(recur_model_bind_weight(model, info.name, &view));
      weights.push_back(std::move(tensor));
    }
  }
  // Inputs: from a file, else random with T/B from the flags.
  std::unique_ptr<st::File> inputFile;
  if (options.inputs) {
    std::string error;
    inputFile = st::File::open(*options.inputs, error);
    if (!inputFile)
      die(error);
  }
  std::mt19937_64 inputRng(
      options.seed.value_or(options.randomWeights.value_or(0)));
  std::vector<HostTensor> inputs;
  std::vector<RecurTensorInfo> inputInfos(
      recur_model_num_tensors(model, RECUR_INPUT));
  std::string inputNames;
  for (size_t i = 0; i < inputInfos.size(); ++i) {
    check(recur_model_tensor_info(model, RECUR_INPUT, i, &inputInfos[i]));
    inputNames += (i ? ", " : "") + std::string(inputInfos[i].name);
  }
  if (inputFile) // as strict as weights: a misnamed input is a mistake
    for (const st::Entry &entry : inputFile->entries())
      if (std::none_of(inputInfos.begin(), inputInfos.end(),
                       [&](const RecurTensorInfo &info) {
                         return entry.name == info.name;
                       }))
        die("'" + *options.inputs + "' holds '" + entry.name +
            "', which is not an input of the model (its inputs: " + inputNames +
            ")");
  // --seq/--batch for a dimension named T/B; the flag's name for messages.
  auto sizeFlag = [&](const char *dim) -> std::optional<int64_t> {
    std::string name = dim;
    return name == "T"   ? options.seq
           : name == "B" ? options.batch
                         : std::nullopt;
  };
  auto sizeFlagName = [](const char *dim) {
    return std::string(dim) == "T" ? "--seq" : "--batch";
  };
  int64_t batch = 1;
  for (const RecurTensorInfo &info : inputInfos) {
    HostTensor tensor = makeTensor(info);
    if (inputFile) {
      const st::Entry *entry = inputFile->find(info.name);
      std::string where =
          "input '" + tensor.name + "' in '" + *options.inputs + "'";
      if (!entry)
        die("input '" + tensor.name + "' is missing from '" + *options.inputs +
            "' (the model's inputs: " + inputNames + ")");
      if (entry->dtype != safetensorsName(info.dtype))
        die(where + " has dtype " + entry->dtype + ", expected " +
            safetensorsName(info.dtype));
      std::string expected = "[";
      for (int d = 0; d < info.ndim; ++d)
        expected += (d ? ", " : "") + (info.shape[d] < 0
                                           ? std::string(info.dims[d])
                                           : std::to_string(info.shape[d]));
      expected += "]";
      bool fits = entry->shape.size() == static_cast<size_t>(info.ndim);
      for (int d = 0; fits && d < info.ndim; ++d)
        fits = info.shape[d] < 0 || entry->shape[d] == info.shape[d];
      if (!fits)
        die(where + " has shape " + ref::formatShape(entry->shape) +
            ", expected " + expected);
      for (int d = 0; d < info.ndim; ++d) {
        std::optional<int64_t> flag = sizeFlag(info.dims[d]);
        if (flag && *flag != entry->shape[d])
          die(where + " has " + info.dims[d] + " = " +
              std::to_string(entry->shape[d]) + ", but " +
              sizeFlagName(info.dims[d]) + " says " + std::to_string(*flag));
      }
      tensor.shape = entry->shape;
      tensor.bytes.assign(entry->data, entry->data + entry->size);
    } else {
      for (size_t d = 0; d < tensor.shape.size(); ++d) {
        std::optional<int64_t> flag = sizeFlag(info.dims[d]);
        if (tensor.shape[d] >= 0 && flag && *flag != tensor.shape[d])
          die(std::string("input '") + tensor.name + "' is compiled with " +
              info.dims[d] + " = " + std::to_string(tensor.shape[d]) +
              " (recur-gen --seq/--batch or recur-compile --input-shape), "
              "but " +
              sizeFlagName(info.dims[d]) + " says " + std::to_string(*flag));
        if (tensor.shape[d] >= 0)
          continue;
        bool isSeq = std::string(info.dims[d]) == "T";
        std::optional<int64_t> size = isSeq ? options.seq : options.batch;
        if (!size)
          die(std::string("input '") + tensor.name + "' has a dynamic " +
              (isSeq ? "T: give --seq T" : "B: give --batch B") +
              " or --inputs");
        tensor.shape[d] = *size;
      }
      fillRandom(tensor, inputRng, /*isWeight=*/false);
    }
    for (size_t d = 0; d < tensor.shape.size(); ++d)
      if (std::string(info.dims[d]) == "B")
        batch = tensor.shape[d];
    inputs.push_back(std::move(tensor));
  }
  std::vector<DLTensor> inputViews;
  for (HostTensor &tensor : inputs)
    inputViews.push_back(tensor.view());
  std::vector<const DLTensor *> inputPointers;
  for (DLTensor &view : inputViews)
    inputPointers.push_back(&view);

  if (options.threads)
    check(recur_model_set_threads(model, *options.threads));

  size_t numOutputs = recur_model_num_tensors(model, RECUR_OUTPUT);
  std::vector<std::string> outputNames;
  for (size_t i = 0; i < numOutputs; ++i) {
    RecurTensorInfo info;
    check(recur_model_tensor_info(model, RECUR_OUTPUT, i, &info));
    outputNames.push_back(info.name);
  }
  std::vector<DLManagedTensor *> outputs(numOutputs, nullptr);
  auto release = [&] {
    for (DLManagedTensor *&tensor : outputs)
      if (tensor) {
        tensor->deleter(tensor);
        tensor = nullptr;
      }
  };
  // A training step's run updates its weights: its timed runs are the
  // steps, each step's outputs are kept (stacked for --outputs), and what is
  // --check'ed is the first step, computed from the weights as bound.
  if (trains && onGpu)
    check(recur_model_set_host_outputs(model, 1));
  std::vector<DLManagedTensor *> firstOutputs;
  std::vector<std::vector<uint8_t>> stackedOutputs(numOutputs);
  std::vector<HostTensor> weightsAfterFirstStep;
  std::vector<double> times;
  json steps = json::array();
  for (int iteration = 0; iteration < warmup + timed; ++iteration) {
    release();
    auto start = std::chrono::steady_clock::now();
    check(recur_model_run(model, inputPointers.data(), inputPointers.size(),
                          outputs.data(), outputs.size()));
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (iteration >= warmup)
      times.push_back(ms);
    if (!trains)
      continue;
    json step = {{"ms", ms}};
    std::string scalars;
    for (size_t i = 0; i < numOutputs; ++i) {
      const DLTensor &tensor = outputs[i]->dl_tensor;
      const uint8_t *data =
          static_cast<const uint8_t *>(tensor.data) + tensor.byte_offset;
      stackedOutputs[i].insert(stackedOutputs[i].end(), data,
                               data + byteSize(tensor));
      if (tensor.ndim == 0 && isFloat(tensor.dtype)) {
        float value = floatAt(data, tensor.dtype, 0);
        step[outputNames[i]] = value;
        scalars += outputNames[i] + " " + formatFloat(value) + ", ";
      }
    }
    steps.push_back(step);
    if (!options.json) // a progress line per step
      std::printf("recur-run: step %d/%d: %s%.3f ms\n", iteration + 1, timed,
                  scalars.c_str(), ms);
    if (iteration == 0) {
      firstOutputs = outputs;
      std::fill(outputs.begin(), outputs.end(), nullptr);
      if (options.check)
        weightsAfterFirstStep = readWeights(model, weights);
    }
  }
  if (trains) {
    release();
    outputs = firstOutputs;
  }
  if (onGpu && !trains) {
    release();
    check(recur_model_set_host_outputs(model, 1));
    check(recur_model_run(model, inputPointers.data(), inputPointers.size(),
                          outputs.data(), outputs.size()));
  }
  if (options.saveWeights) // after the runs: a training model's trained ones
    check(recur_model_save_weights(model, options.saveWeights->c_str()));
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  if (sorted.size() % 2 == 0)
    median = (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  double sequencesPerSecond = batch * 1000.0 / median;

  json report = {
      {"model", options.model},
      {"device", recur_model_device(model)},
      {"threads", options.threads ? json(*options.threads) : json("default")},
      {"batch", batch},
      {"warmup", warmup},
      {"iters", timed},
      {"ms_per_batch",
       {{"median", median}, {"min", sorted.front()}, {"max", sorted.back()}}},
      {"sequences_per_second", sequencesPerSecond},
      {"pipeline", description.value("pipeline", "")},
      {"fusion", description.value("fusion", "none")},
      {"precision", precision},
      {"launches", recur_model_run_report(model)}};
  for (size_t i = 0; i < inputs.size(); ++i)
    report["inputs"][inputs[i].name] = inputs[i].shape;
  if (trains)
    report["steps"] = steps;

  if (options.outputs) {
    st::Writer writer;
    std::string error;
    for (size_t i = 0; i < numOutputs; ++i) {
      const DLTensor &tensor = outputs[i]->dl_tensor;
      std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.ndim);
      bool added;
      if (trains) { // every step's, stacked: [steps, ...]
        shape.insert(shape.begin(), timed);
        added = writer.add(outputNames[i], safetensorsName(tensor.dtype), shape,
                           stackedOutputs[i].data(), stackedOutputs[i].size(),
                           error);
      } else {
        added = writer.add(outputNames[i], safetensorsName(tensor.dtype), shape,
                           static_cast<const char *>(tensor.data) +
                               tensor.byte_offset,
                           byteSize(tensor), error);
      }
      if (!added)
        die(error);
    }
    if (!writer.write(*options.outputs, error))
      die(error);
  }

  bool checkFailed = false;
  if (options.check || options.saveReference) {
    const char *flag = options.check ? "--check" : "--save-reference";
    if (!description.contains("program"))
      die(std::string(flag) +
          ": the model carries no program the reference can run");
    std::map<std::string, ref::Value> arguments;
    for (const HostTensor &tensor : weights)
      arguments[tensor.name] = toReference(tensor);
    for (const HostTensor &tensor : inputs)
      arguments[tensor.name] = toReference(tensor);
    std::vector<ref::Value> expected;
    try {
      expected = ref::interpret(description["program"], arguments);
    } catch (const std::exception &error) {
      die(std::string(flag) + ": the reference failed: " + error.what());
    }
    std::optional<ref::DoubleTensors> gradients;
    if (trains)
      gradients = referenceGradients(description["training"], weights, inputs);
    if (options.saveReference) {
      st::Writer writer;
      std::string error;
      for (size_t i = 0; i < numOutputs; ++i) {
        RecurTensorInfo info;
        check(recur_model_tensor_info(model, RECUR_OUTPUT, i, &info));
        bool added;
        if (const auto *value = std::get_if<ref::FloatTensor>(&expected[i])) {
          added = writer.add(info.name, "F32", value->shape, value->data.data(),
                             value->data.size() * sizeof(float), error);
        } else {
          const auto &ids = std::get<ref::IdTensor>(expected[i]);
          added = writer.add(info.name, "I64", ids.shape, ids.data.data(),
                             ids.data.size() * sizeof(int64_t), error);
        }
        if (!added)
          die(error);
      }
      // A training step's reference also holds the weights after its first
      // step, as --save-weights after --steps 1 writes the model's.
      if (trains) {
        double lr = description["training"].at("lr");
        for (const std::string name : description["training"].at("updates")) {
          const HostTensor &old = findTensor(weights, name);
          const ref::DoubleTensor &gradient = gradients->at(name);
          const auto *data = reinterpret_cast<const float *>(old.bytes.data());
          std::vector<float> updated(gradient.data.size());
          for (size_t i = 0; i < updated.size(); ++i)
            updated[i] = static_cast<float>(data[i] - lr * gradient.data[i]);
          if (!writer.add(name, "F32", old.shape, updated.data(),
                          updated.size() * sizeof(float), error))
            die(error);
        }
      }
      if (!writer.write(*options.saveReference, error))
        die(error);
    }
    for (size_t i = 0; options.check && i < numOutputs; ++i) {
      RecurTensorInfo info;
      check(recur_model_tensor_info(model, RECUR_OUTPUT, i, &info));
      const auto *want = std::get_if<ref::FloatTensor>(&expected[i]);
      const DLTensor &got = outputs[i]->dl_tensor;
      std::vector<int64_t> shape(got.shape, got.shape + got.ndim);
      double tolerance = options.tolerance.value_or(
          recur::checkTolerance(got.dtype, precision));
      json entry = {{"name", info.name}, {"tolerance", tolerance}};
      if (!want || !isFloat(got.dtype) || want->shape != shape) {
        entry["pass"] = false;
        entry["error"] = "shape " + ref::formatShape(shape) + ", reference " +
                         (want ? ref::formatShape(want->shape) : "not f32");
        checkFailed = true;
      } else {
        Comparison result = compare(got, *want, tolerance);
        entry["max_abs_error"] = result.maxAbs;
        entry["max_rel_error"] = result.maxRel;
        entry["non_finite"] = result.nonFinite;
        entry["non_finite_reference"] = result.nonFiniteReference;
        entry["pass"] = result.pass;
        checkFailed |= !result.pass;
      }
      report["check"].push_back(entry);
    }
    if (options.check && trains)
      for (json &entry : checkGradients(
               description["training"], *gradients, weights,
               weightsAfterFirstStep,
               options.tolerance.value_or(recur::checkTolerance(
                   recur::findDtypeByName("f32")->dlpack, precision)))) {
        checkFailed |= !entry["pass"].get<bool>();
        report["check"].push_back(std::move(entry));
      }
  }
  release();
  recur_model_free(model);

  if (options.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::string shapes;
    for (const HostTensor &tensor : inputs)
      shapes += " " + tensor.name + ref::formatShape(tensor.shape);
    // fp32, the default, goes without saying.
    std::string reduced = precision == "fp32" ? "" : ", precision " + precision;
    std::printf("recur-run: %s on %s, fusion %s%s, inputs%s, threads %s\n",
                options.model.c_str(),
                report["device"].get<std::string>().c_str(),
                report["fusion"].get<std::string>().c_str(), reduced.c_str(),
                shapes.c_str(), report["threads"].dump().c_str());
    std::printf("recur-run: %.3f ms/%s (median of %d; min %.3f, max %.3f), "
                "%.1f sequences/s\n",
                median, trains ? "step" : "batch", timed, sorted.front(),
                sorted.back(), sequencesPerSecond);
    if (std::string launches = report["launches"]; !launches.empty())
      std::printf("recur-run: last run: %s\n", launches.c_str());
    for (const json &entry : report.value("check", json::array())) {
      if (entry.contains("error"))
        std::printf("check %s: FAIL (%s)\n",
                    entry["name"].get<std::string>().c_str(),
                    entry["error"].get<std::string>().c_str());
      else if (entry.value("kind", "") == "gradient")
        std::printf("check %s: %s (max abs error %.3g, of its largest element "
                    "%.3g; tolerance %.2g of it)\n",
                    entry["name"].get<std::string>().c_str(),
                    entry["pass"].get<bool>() ? "pass" : "FAIL",
                    entry["max_abs_error"].get<double>(),
                    entry["largest_gradient"].get<double>(),
                    entry["tolerance"].get<double>());
      else
        std::printf("check %s: %s (%smax abs error %.3g, max rel error %.3g, "
                    "tolerance %.2g)\n",
                    entry["name"].get<std::string>().c_str(),
                    entry["pass"].get<bool>() ? "pass" : "FAIL",
                    entry["non_finite"].get<int64_t>() ||
                            entry["non_finite_reference"].get<int64_t>()
                        ? (std::to_string(entry["non_finite"].get<int64_t>()) +
                           " NaN or infinite values, the reference " +
                           std::to_string(
                               entry["non_finite_reference"].get<int64_t>()) +
                           "; over the finite rest: ")
                              .c_str()
                        : "",
                    entry["max_abs_error"].get<double>(),
                    entry["max_rel_error"].get<double>(),
                    entry["tolerance"].get<double>());
    }
  }
  return checkFailed ? 3 : 0;
}

int main(int argc, char **argv) {
  // Sizes are checked before anything large is allocated; a machine that
  // still runs out of memory gets a message, not an uncaught exception.
  try {
    return runMain(argc, argv);
  } catch (const std::bad_alloc &) {
    die("out of memory");
  } catch (const std::length_error &error) {
    die(std::string("a tensor is too large: ") + error.what());
  }
}
