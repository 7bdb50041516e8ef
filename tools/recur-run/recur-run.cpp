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

#include "Check.h"
#include "HostTensors.h"
#include "Options.h"

#include "Safetensors.h"
#include "reference/Interpreter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

using nlohmann::json;
using namespace recur::run;
namespace st = recur::safetensors;

namespace {

/// What the model's description says that recur-run acts on.
struct ModelFacts {
  json description;
  std::string precision; // of the GEMMs' products: sets --check's tolerance
  bool onGpu = false;
  bool trains = false;
};

ModelFacts readFacts(RecurModel *model) {
  ModelFacts facts;
  facts.description = json::parse(recur_model_description(model));
  facts.precision = facts.description.value("precision", "fp32");
  facts.onGpu = recur_model_target(model) == RECUR_TARGET_CUDA;
  facts.trains = facts.description.contains("training");
  return facts;
}

/// Binds the weights from --weights or at random; returns them as bound
/// (for --check and --save-reference; random ones always).
std::vector<HostTensor> bindWeights(RecurModel *model, const Options &options) {
  std::vector<HostTensor> weights;
  size_t numWeights = recur_model_num_tensors(model, RECUR_WEIGHT);
  if (!options.weights) {
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
    return weights;
  }
  int mode = (options.nonStrict ? RECUR_BIND_NON_STRICT : RECUR_BIND_STRICT) |
             (options.convertWeights ? RECUR_BIND_CONVERT_TO_BF16 : 0);
  check(recur_model_bind_weights_file_mode(model, options.weights->c_str(),
                                           mode));
  if (!options.check && !options.saveReference)
    return weights;
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
    if (options.convertWeights && entry->dtype == "F32" && isBf16(info.dtype))
      tensor.bytes =
          recur::floatsToBf16Bytes(entry->data, entry->size / sizeof(float));
    else
      tensor.bytes.assign(entry->data, entry->data + entry->size);
    weights.push_back(std::move(tensor));
  }
  return weights;
}

/// --seq for a dimension named T, --batch for B.
std::optional<int64_t> sizeFlag(const Options &options, const char *dim) {
  std::string name = dim;
  return name == "T" ? options.seq : name == "B" ? options.batch : std::nullopt;
}
const char *sizeFlagName(const char *dim) {
  return std::string(dim) == "T" ? "--seq" : "--batch";
}

/// The input `info` from --inputs, checked against the model and the flags.
HostTensor readInput(const RecurTensorInfo &info, const st::File &file,
                     const Options &options, const std::string &inputNames) {
  HostTensor tensor = makeTensor(info);
  const st::Entry *entry = file.find(info.name);
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
    expected +=
        (d ? ", " : "") + (info.shape[d] < 0 ? std::string(info.dims[d])
                                             : std::to_string(info.shape[d]));
  expected += "]";
  bool fits = entry->shape.size() == static_cast<size_t>(info.ndim);
  for (int d = 0; fits && d < info.ndim; ++d)
    fits = info.shape[d] < 0 || entry->shape[d] == info.shape[d];
  if (!fits)
    die(where + " has shape " + ref::formatShape(entry->shape) + ", expected " +
        expected);
  for (int d = 0; d < info.ndim; ++d) {
    std::optional<int64_t> flag = sizeFlag(options, info.dims[d]);
    if (flag && *flag != entry->shape[d])
      die(where + " has " + info.dims[d] + " = " +
          std::to_string(entry->shape[d]) + ", but " +
          sizeFlagName(info.dims[d]) + " says " + std::to_string(*flag));
  }
  tensor.shape = entry->shape;
  tensor.bytes.assign(entry->data, entry->data + entry->size);
  return tensor;
}

/// The input `info` drawn at random, its dynamic T and B from the flags.
HostTensor randomInput(const RecurTensorInfo &info, const Options &options,
                       std::mt19937_64 &rng) {
  HostTensor tensor = makeTensor(info);
  for (size_t d = 0; d < tensor.shape.size(); ++d) {
    std::optional<int64_t> flag = sizeFlag(options, info.dims[d]);
    if (tensor.shape[d] >= 0 && flag && *flag != tensor.shape[d])
      die(std::string("input '") + tensor.name + "' is compiled with " +
          info.dims[d] + " = " + std::to_string(tensor.shape[d]) +
          " (recur-gen --seq/--batch or recur-compile --input-shape), but " +
          sizeFlagName(info.dims[d]) + " says " + std::to_string(*flag));
    if (tensor.shape[d] >= 0)
      continue;
    bool isSeq = std::string(info.dims[d]) == "T";
    std::optional<int64_t> size = isSeq ? options.seq : options.batch;
    if (!size)
      die(std::string("input '") + tensor.name + "' has a dynamic " +
          (isSeq ? "T: give --seq T" : "B: give --batch B") + " or --inputs");
    tensor.shape[d] = *size;
  }
  if (info.lengths_steps) {
    std::optional<int64_t> steps = info.lengths_steps > 0
                                       ? std::optional(info.lengths_steps)
                                       : options.seq;
    if (!steps)
      die(std::string("input '") + tensor.name +
          "' holds sequence lengths, which lie in [1, T]: give --seq T or "
          "--inputs");
    fillRandomLengths(tensor, rng, *steps);
    return tensor;
  }
  fillRandom(tensor, rng, /*isWeight=*/false);
  return tensor;
}

/// The model's inputs, from --inputs or at random with T/B from the flags;
/// `batch` is their B (1 without one).
std::vector<HostTensor> makeInputs(RecurModel *model, const Options &options,
                                   int64_t &batch) {
  std::unique_ptr<st::File> inputFile;
  if (options.inputs) {
    std::string error;
    inputFile = st::File::open(*options.inputs, error);
    if (!inputFile)
      die(error);
  }
  std::vector<RecurTensorInfo> infos(
      recur_model_num_tensors(model, RECUR_INPUT));
  std::string inputNames;
  for (size_t i = 0; i < infos.size(); ++i) {
    check(recur_model_tensor_info(model, RECUR_INPUT, i, &infos[i]));
    inputNames += (i ? ", " : "") + std::string(infos[i].name);
  }
  if (inputFile) // as strict as weights: a misnamed input is a mistake
    for (const st::Entry &entry : inputFile->entries())
      if (std::none_of(infos.begin(), infos.end(),
                       [&](const RecurTensorInfo &info) {
                         return entry.name == info.name;
                       }))
        die("'" + *options.inputs + "' holds '" + entry.name +
            "', which is not an input of the model (its inputs: " + inputNames +
            ")");
  std::mt19937_64 rng(options.seed.value_or(options.randomWeights.value_or(0)));
  std::vector<HostTensor> inputs;
  batch = 1;
  for (const RecurTensorInfo &info : infos) {
    HostTensor tensor = inputFile
                            ? readInput(info, *inputFile, options, inputNames)
                            : randomInput(info, options, rng);
    for (size_t d = 0; d < tensor.shape.size(); ++d)
      if (std::string(info.dims[d]) == "B")
        batch = tensor.shape[d];
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

/// The timed runs (an inference model's warm-up and timed runs, a training
/// model's steps) and the outputs they leave.
struct Runs {
  std::vector<std::string> outputNames;
  /// An inference model's last run's outputs on the host; a training
  /// step's first step's (what --check compares).
  std::vector<DLManagedTensor *> outputs;
  /// A training step's: each output stacked over the steps, and the weights
  /// after its first step (read for --check).
  std::vector<std::vector<uint8_t>> stackedOutputs;
  std::vector<HostTensor> weightsAfterFirstStep;
  json steps = json::array();
  /// The timed runs' ms, sorted.
  std::vector<double> sortedTimes;

  double median() const {
    size_t n = sortedTimes.size();
    return n % 2 ? sortedTimes[n / 2]
                 : (sortedTimes[n / 2 - 1] + sortedTimes[n / 2]) / 2;
  }
  void release() {
    for (DLManagedTensor *&tensor : outputs)
      if (tensor) {
        tensor->deleter(tensor);
        tensor = nullptr;
      }
  }
};

Runs runTimed(RecurModel *model, const ModelFacts &facts,
              const Options &options,
              const std::vector<const DLTensor *> &inputs,
              const std::vector<HostTensor> &weights, int warmup, int timed) {
  Runs runs;
  size_t numOutputs = recur_model_num_tensors(model, RECUR_OUTPUT);
  for (size_t i = 0; i < numOutputs; ++i) {
    RecurTensorInfo info;
    check(recur_model_tensor_info(model, RECUR_OUTPUT, i, &info));
    runs.outputNames.push_back(info.name);
  }
  runs.outputs.assign(numOutputs, nullptr);
  runs.stackedOutputs.resize(numOutputs);
  // A training step's run updates its weights: its timed runs are the
  // steps, each step's outputs are kept (stacked for --outputs), and what is
  // --check'ed is the first step, computed from the weights as bound.
  if (facts.trains && facts.onGpu)
    check(recur_model_set_host_outputs(model, 1));
  std::vector<DLManagedTensor *> firstOutputs;
  auto run = [&] {
    check(recur_model_run(model, inputs.data(), inputs.size(),
                          runs.outputs.data(), runs.outputs.size()));
  };
  for (int iteration = 0; iteration < warmup + timed; ++iteration) {
    runs.release();
    auto start = std::chrono::steady_clock::now();
    run();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (iteration >= warmup)
      runs.sortedTimes.push_back(ms);
    if (!facts.trains)
      continue;
    json step = {{"ms", ms}};
    std::string scalars;
    for (size_t i = 0; i < numOutputs; ++i) {
      const DLTensor &tensor = runs.outputs[i]->dl_tensor;
      const uint8_t *data =
          static_cast<const uint8_t *>(tensor.data) + tensor.byte_offset;
      runs.stackedOutputs[i].insert(runs.stackedOutputs[i].end(), data,
                                    data + byteSize(tensor));
      if (tensor.ndim == 0 && isFloat(tensor.dtype)) {
        float value = floatAt(data, tensor.dtype, 0);
        step[runs.outputNames[i]] = value;
        scalars += runs.outputNames[i] + " " + formatFloat(value) + ", ";
      }
    }
    runs.steps.push_back(step);
    if (!options.json) // a progress line per step
      std::printf("recur-run: step %d/%d: %s%.3f ms\n", iteration + 1, timed,
                  scalars.c_str(), ms);
    if (iteration == 0) {
      firstOutputs = runs.outputs;
      std::fill(runs.outputs.begin(), runs.outputs.end(), nullptr);
      if (options.check)
        runs.weightsAfterFirstStep = readWeights(model, weights);
    }
  }
  if (facts.trains) {
    runs.release();
    runs.outputs = firstOutputs;
  }
  // A CUDA model's timed runs leave their outputs on the device, as a GPU
  // application's would; one more run brings them to the host for saving
  // and checking.
  if (facts.onGpu && !facts.trains) {
    runs.release();
    check(recur_model_set_host_outputs(model, 1));
    run();
  }
  std::sort(runs.sortedTimes.begin(), runs.sortedTimes.end());
  return runs;
}

/// --outputs: every output (a training step's stacked over its steps).
void writeOutputs(const Runs &runs, bool trains, int timed,
                  const std::string &path) {
  st::Writer writer;
  std::string error;
  for (size_t i = 0; i < runs.outputs.size(); ++i) {
    const DLTensor &tensor = runs.outputs[i]->dl_tensor;
    std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.ndim);
    bool added;
    if (trains) { // every step's, stacked: [steps, ...]
      shape.insert(shape.begin(), timed);
      added = writer.add(runs.outputNames[i], safetensorsName(tensor.dtype),
                         shape, runs.stackedOutputs[i].data(),
                         runs.stackedOutputs[i].size(), error);
    } else {
      added = writer.add(
          runs.outputNames[i], safetensorsName(tensor.dtype), shape,
          static_cast<const char *>(tensor.data) + tensor.byte_offset,
          byteSize(tensor), error);
    }
    if (!added)
      die(error);
  }
  if (!writer.write(path, error))
    die(error);
}

/// --save-reference: the reference's outputs, and a training step's weights
/// after its first step, as --save-weights after --steps 1 writes them.
void saveReference(const std::vector<std::string> &outputNames,
                   const std::vector<ref::Value> &expected,
                   const ModelFacts &facts,
                   const std::optional<ref::DoubleTensors> &gradients,
                   const std::vector<HostTensor> &weights,
                   const std::string &path) {
  st::Writer writer;
  std::string error;
  for (size_t i = 0; i < outputNames.size(); ++i) {
    bool added;
    if (const auto *value = std::get_if<ref::FloatTensor>(&expected[i])) {
      added =
          writer.add(outputNames[i], "F32", value->shape, value->data.data(),
                     value->data.size() * sizeof(float), error);
    } else {
      const auto &ids = std::get<ref::IdTensor>(expected[i]);
      added = writer.add(outputNames[i], "I64", ids.shape, ids.data.data(),
                         ids.data.size() * sizeof(int64_t), error);
    }
    if (!added)
      die(error);
  }
  if (facts.trains) {
    const json &training = facts.description["training"];
    double lr = training.at("lr");
    for (const std::string name : training.at("updates")) {
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
  if (!writer.write(path, error))
    die(error);
}

/// --check's entries for the outputs: each against the reference's.
json checkOutputs(const Runs &runs, const std::vector<ref::Value> &expected,
                  const ModelFacts &facts, const Options &options) {
  json entries = json::array();
  for (size_t i = 0; i < runs.outputs.size(); ++i) {
    const auto *want = std::get_if<ref::FloatTensor>(&expected[i]);
    const DLTensor &got = runs.outputs[i]->dl_tensor;
    std::vector<int64_t> shape(got.shape, got.shape + got.ndim);
    double tolerance = options.tolerance.value_or(
        recur::checkTolerance(got.dtype, facts.precision));
    json entry = {{"name", runs.outputNames[i]}, {"tolerance", tolerance}};
    if (!want || !isFloat(got.dtype) || want->shape != shape) {
      entry["pass"] = false;
      entry["error"] = "shape " + ref::formatShape(shape) + ", reference " +
                       (want ? ref::formatShape(want->shape) : "not f32");
    } else {
      Comparison result = compare(got, *want, tolerance);
      entry["max_abs_error"] = result.maxAbs;
      entry["max_rel_error"] = result.maxRel;
      entry["non_finite"] = result.nonFinite;
      entry["non_finite_reference"] = result.nonFiniteReference;
      entry["pass"] = result.pass;
    }
    entries.push_back(entry);
  }
  return entries;
}

/// Runs the reference for --check and --save-reference; returns --check's
/// entries (none without --check).
json compareWithReference(const Runs &runs, const ModelFacts &facts,
                          const Options &options,
                          const std::vector<HostTensor> &weights,
                          const std::vector<HostTensor> &inputs) {
  const char *flag = options.check ? "--check" : "--save-reference";
  if (!facts.description.contains("program"))
    die(std::string(flag) +
        ": the model carries no program the reference can run");
  std::map<std::string, ref::Value> arguments;
  for (const HostTensor &tensor : weights)
    arguments[tensor.name] = toReference(tensor);
  for (const HostTensor &tensor : inputs)
    arguments[tensor.name] = toReference(tensor);
  std::vector<ref::Value> expected;
  try {
    expected = ref::interpret(facts.description["program"], arguments);
  } catch (const std::exception &error) {
    die(std::string(flag) + ": the reference failed: " + error.what());
  }
  std::optional<ref::DoubleTensors> gradients;
  if (facts.trains)
    gradients =
        referenceGradients(facts.description["training"], weights, inputs);
  if (options.saveReference)
    saveReference(runs.outputNames, expected, facts, gradients, weights,
                  *options.saveReference);
  if (!options.check)
    return json::array();
  json entries = checkOutputs(runs, expected, facts, options);
  if (facts.trains)
    for (json &entry : checkGradients(
             facts.description["training"], *gradients, weights,
             runs.weightsAfterFirstStep,
             options.tolerance.value_or(recur::checkTolerance(
                 recur::findDtypeByName("f32")->dlpack, facts.precision))))
      entries.push_back(std::move(entry));
  return entries;
}

/// The report's lines for a person (--json prints the report itself).
void printReport(const json &report, const Options &options,
                 const std::vector<HostTensor> &inputs, const Runs &runs,
                 const ModelFacts &facts, int timed) {
  std::string shapes;
  for (const HostTensor &tensor : inputs)
    shapes += " " + tensor.name + ref::formatShape(tensor.shape);
  // fp32, the default, goes without saying.
  std::string reduced =
      facts.precision == "fp32" ? "" : ", precision " + facts.precision;
  std::printf("recur-run: %s on %s, fusion %s%s, inputs%s, threads %s\n",
              options.model.c_str(),
              report["device"].get<std::string>().c_str(),
              report["fusion"].get<std::string>().c_str(), reduced.c_str(),
              shapes.c_str(), report["threads"].dump().c_str());
  std::printf("recur-run: %.3f ms/%s (median of %d; min %.3f, max %.3f), "
              "%.1f sequences/s\n",
              runs.median(), facts.trains ? "step" : "batch", timed,
              runs.sortedTimes.front(), runs.sortedTimes.back(),
              report["sequences_per_second"].get<double>());
  if (std::string launches = report["launches"]; !launches.empty())
    std::printf("recur-run: last run: %s\n", launches.c_str());
  for (const json &entry : report.value("check", json::array())) {
    std::string name = entry["name"];
    if (entry.contains("error")) {
      std::printf("check %s: FAIL (%s)\n", name.c_str(),
                  entry["error"].get<std::string>().c_str());
      continue;
    }
    const char *verdict = entry["pass"].get<bool>() ? "pass" : "FAIL";
    if (entry.value("kind", "") == "gradient") {
      std::printf("check %s: %s (max abs error %.3g, of its largest element "
                  "%.3g; tolerance %.2g of it)\n",
                  name.c_str(), verdict, entry["max_abs_error"].get<double>(),
                  entry["largest_gradient"].get<double>(),
                  entry["tolerance"].get<double>());
      continue;
    }
    int64_t nonFinite = entry["non_finite"];
    int64_t nonFiniteReference = entry["non_finite_reference"];
    std::string finite = nonFinite || nonFiniteReference
                             ? std::to_string(nonFinite) +
                                   " NaN or infinite values, the reference " +
                                   std::to_string(nonFiniteReference) +
                                   "; over the finite rest: "
                             : "";
    std::printf("check %s: %s (%smax abs error %.3g, max rel error %.3g, "
                "tolerance %.2g)\n",
                name.c_str(), verdict, finite.c_str(),
                entry["max_abs_error"].get<double>(),
                entry["max_rel_error"].get<double>(),
                entry["tolerance"].get<double>());
  }
}

} // namespace

static int runMain(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  RecurModel *model = nullptr;
  check(recur_model_load(options.model.c_str(), &model));
  ModelFacts facts = readFacts(model);
  if (facts.trains && (options.warmup || options.iters))
    die("'" + options.model +
        "' is a training step: every run changes its weights, so it takes "
        "--steps N, not --warmup/--iters");
  if (!facts.trains && options.steps)
    die("--steps: '" + options.model +
        "' is not a training step (recur-gen --train); time it with --warmup "
        "K --iters N");
  int warmup = facts.trains ? 0 : options.warmup.value_or(1);
  int timed =
      facts.trains ? options.steps.value_or(1) : options.iters.value_or(3);

  std::vector<HostTensor> weights = bindWeights(model, options);
  int64_t batch = 1;
  std::vector<HostTensor> inputs = makeInputs(model, options, batch);
  std::vector<DLTensor> inputViews;
  for (HostTensor &tensor : inputs)
    inputViews.push_back(tensor.view());
  std::vector<const DLTensor *> inputPointers;
  for (DLTensor &view : inputViews)
    inputPointers.push_back(&view);
  if (options.threads)
    check(recur_model_set_threads(model, *options.threads));

  Runs runs =
      runTimed(model, facts, options, inputPointers, weights, warmup, timed);
  if (options.saveWeights) // after the runs: a training model's trained ones
    check(recur_model_save_weights(model, options.saveWeights->c_str()));

  json report = {
      {"model", options.model},
      {"device", recur_model_device(model)},
      {"threads", options.threads ? json(*options.threads) : json("default")},
      {"batch", batch},
      {"warmup", warmup},
      {"iters", timed},
      {"ms_per_batch",
       {{"median", runs.median()},
        {"min", runs.sortedTimes.front()},
        {"max", runs.sortedTimes.back()}}},
      {"sequences_per_second", batch * 1000.0 / runs.median()},
      {"pipeline", facts.description.value("pipeline", "")},
      {"fusion", facts.description.value("fusion", "none")},
      {"precision", facts.precision},
      {"launches", recur_model_run_report(model)}};
  for (const HostTensor &tensor : inputs)
    report["inputs"][tensor.name] = tensor.shape;
  if (facts.trains)
    report["steps"] = runs.steps;

  if (options.outputs)
    writeOutputs(runs, facts.trains, timed, *options.outputs);
  bool checkFailed = false;
  if (options.check || options.saveReference) {
    for (json &entry :
         compareWithReference(runs, facts, options, weights, inputs)) {
      checkFailed |= !entry["pass"].get<bool>();
      report["check"].push_back(std::move(entry));
    }
  }
  runs.release();
  recur_model_free(model);

  if (options.json)
    std::cout << report.dump(2) << "\n";
  else
    printReport(report, options, inputs, runs, facts, timed);
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
