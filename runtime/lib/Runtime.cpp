//===- Runtime.cpp - librecur-runtime's C API -----------------------------===//
//
// Loads a model, checks every tensor against its description, and runs it
// through its backend: Description.h (what the model expects),
// TensorChecks.h (tensors vs. specs), MemrefAbi.h (the calling convention),
// Backend.h (CPU or CUDA memory and execution).
//
//===----------------------------------------------------------------------===//

#include "recur/runtime.h"

#include "Backend.h"
#include "Cuda.h"
#include "Description.h"
#include "Dtypes.h"
#include "MemrefAbi.h"
#include "Safetensors.h"
#include "Shapes.h"
#include "TensorChecks.h"

#include <dlfcn.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

struct RecurError {
  std::string message;
};

using namespace recur::runtime;
using recur::formatShape;

struct RecurModel {
  std::string path;
  void *handle = nullptr;
  void (*run)(void **) = nullptr;
  void (*prepare)(void **) = nullptr; // the weight prologue, if any
  void (*setOmpThreads)(int) = nullptr;
  std::string descriptionJson;
  ModelDescription description;
  std::unique_ptr<Backend> backend;
  std::vector<std::unique_ptr<Buffer>> weights; // parallel to description's
  int threads = 0;                              // 0: OpenMP's default

  // What the prologue computed from the bound weights: where each derived
  // tensor's elements are, and the buffers it allocated (a result that
  // aliases a weight or another result is not among them). Recomputed at
  // the first run after any weight is bound.
  std::mutex prologueMutex;
  bool derivedStale = true;
  // A training step writes its weights: its runs, and reads of its weights,
  // take turns.
  std::mutex trainingMutex;
  std::unique_lock<std::mutex> lockWeightsIfTraining() {
    return description.trains() ? std::unique_lock<std::mutex>(trainingMutex)
                                : std::unique_lock<std::mutex>();
  }
  std::vector<const void *> derivedData; // parallel to description.derived
  std::vector<void *> derivedBuffers;

  void releaseDerived() {
    for (void *buffer : derivedBuffers)
      backend->freeResult(buffer);
    derivedBuffers.clear();
    derivedData.assign(description.derived.size(), nullptr);
    derivedStale = true;
  }

  ~RecurModel() {
    // Device memory and kernels go before the library that loaded them.
    if (backend)
      releaseDerived();
    weights.clear();
    backend.reset();
    if (handle)
      dlclose(handle);
  }

  /// Weight `index`'s current value, `bytes` long, into host memory. The
  /// caller holds the training and run locks.
  void copyWeightToHost(size_t index, size_t bytes, void *host) {
    if (!weights[index])
      throw Failure("weight '" + description.weights[index].name +
                    "' is not bound");
    DLTensor source{};
    source.device = backend->device();
    backend->readToHost(source, weights[index]->data(), bytes, host);
  }

  /// The spec of weight `name`, and its index; a Failure if there is none.
  const TensorSpec &weightNamed(const std::string &name, size_t &index) const {
    for (index = 0; index < description.weights.size(); ++index)
      if (description.weights[index].name == name)
        return description.weights[index];
    throw Failure("the model has no weight '" + name + "'");
  }
};

namespace {

/// Threads a model may be asked for: more than any machine's cores, few
/// enough that OpenMP can create them (libomp aborts the process when it
/// cannot).
constexpr int kMaxThreads = 1024;

struct OutputContext {
  void *allocated;
  void (*free)(void *allocated);
  std::vector<int64_t> shape;
};

void deleteOutput(DLManagedTensor *tensor) {
  auto *context = static_cast<OutputContext *>(tensor->manager_ctx);
  context->free(context->allocated);
  delete context;
  delete tensor;
}

RecurError *makeError(const std::string &message) {
  return new RecurError{message};
}

/// Runs `body`, converting every failure into an error value.
template <typename Body> RecurError *guarded(Body body) {
  try {
    body();
    return nullptr;
  } catch (const std::exception &error) {
    return makeError(error.what());
  } catch (...) {
    return makeError("unknown error in librecur-runtime");
  }
}

/// Output `index` of a run, owning its buffer (Backend::takeOutput);
/// `tookOver` says whether that is the model's buffer itself.
DLManagedTensor *makeOutput(const RecurModel &model, size_t index,
                            const ResultDescriptors &results, bool owned,
                            bool &tookOver) {
  const TensorSpec &spec = model.description.outputs[index];
  std::string what = "output '" + spec.name + "'";
  std::vector<int64_t> shape = results.shape(index);
  OutputBuffer buffer = model.backend->takeOutput(
      results.allocated(index),
      results.data(index, recur::elementBytes(spec.dtype)),
      byteCount(shape, spec.dtype, what), owned, what);
  tookOver = buffer.tookOver;
  auto tensor = std::make_unique<DLManagedTensor>();
  auto *context =
      new OutputContext{buffer.allocated, buffer.free, std::move(shape)};
  tensor->dl_tensor.data = buffer.data;
  tensor->dl_tensor.device = buffer.device;
  tensor->dl_tensor.ndim = static_cast<int32_t>(context->shape.size());
  tensor->dl_tensor.dtype = spec.dtype;
  tensor->dl_tensor.shape = context->shape.data();
  tensor->dl_tensor.strides = nullptr; // identity layout
  tensor->dl_tensor.byte_offset = 0;
  tensor->manager_ctx = context;
  tensor->deleter = deleteOutput;
  return tensor.release();
}

/// Runs the weight prologue unless its results are up to date with the bound
/// weights. Called with the backend's run lock held.
void prepareDerived(RecurModel &model) {
  std::lock_guard<std::mutex> guard(model.prologueMutex);
  if (!model.derivedStale)
    return;
  model.releaseDerived();
  const ModelDescription &description = model.description;
  if (description.prologueResults.empty()) {
    model.derivedStale = false;
    return;
  }
  std::vector<size_t> ranks;
  for (size_t index : description.prologueResults)
    ranks.push_back(description.derived[index].shape.size());
  ResultDescriptors results(ranks);
  std::vector<std::vector<int64_t>> arguments;
  for (size_t index : description.prologueWeights)
    arguments.push_back(descriptor(model.weights[index]->data(),
                                   description.weights[index].shape));
  std::vector<void *> args = {results.storage()};
  for (std::vector<int64_t> &words : arguments)
    args.push_back(words.data());
  auto freeFailedResults = [&] {
    if (!model.backend->failedRunsSetResults())
      return;
    std::vector<bool> owned = results.owned(arguments);
    for (size_t i = 0; i < results.size(); ++i)
      if (owned[i])
        model.backend->freeResult(results.allocated(i));
  };
  try {
    model.backend->run(model.prepare, args.data());
  } catch (const std::exception &error) {
    freeFailedResults();
    throw Failure(std::string("the weight prologue (run once per weight "
                              "binding) failed: ") +
                  error.what());
  } catch (...) {
    freeFailedResults();
    throw;
  }
  std::vector<bool> owned = results.owned(arguments);
  for (size_t i = 0; i < results.size(); ++i) {
    size_t index = description.prologueResults[i];
    model.derivedData[index] =
        results.data(i, recur::elementBytes(description.derived[index].dtype));
    if (owned[i])
      model.derivedBuffers.push_back(results.allocated(i));
  }
  model.derivedStale = false;
}

/// "a, b, c and 3 more": long lists stay readable in one error line.
std::string listNames(const std::vector<std::string> &names) {
  constexpr size_t kShown = 6;
  std::string text;
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    text += (i ? ", " : "") + names[i];
  if (names.size() > kShown)
    text += " and " + std::to_string(names.size() - kShown) + " more";
  return text;
}

/// Strict binding, as PyTorch's load_state_dict(strict=True): the file holds
/// exactly the model's weights. A name that differs from a missing one by a
/// dotted prefix ("lstm.weight_ih_l0" for "weight_ih_l0") is pointed out.
void checkNamesMatch(const std::vector<TensorSpec> &weights,
                     const recur::safetensors::File &file,
                     const std::string &path) {
  std::vector<std::string> missing, unexpected, hints;
  std::set<std::string> known;
  for (const TensorSpec &spec : weights) {
    known.insert(spec.name);
    if (!file.find(spec.name))
      missing.push_back(spec.name);
  }
  for (const recur::safetensors::Entry &entry : file.entries())
    if (!known.count(entry.name))
      unexpected.push_back(entry.name);
  if (missing.empty() && unexpected.empty())
    return;
  auto endsWithDotted = [](const std::string &longer,
                           const std::string &shorter) {
    return longer.size() > shorter.size() + 1 &&
           longer.compare(longer.size() - shorter.size(), shorter.size(),
                          shorter) == 0 &&
           longer[longer.size() - shorter.size() - 1] == '.';
  };
  for (const std::string &want : missing)
    for (const std::string &have : unexpected)
      if (endsWithDotted(have, want) || endsWithDotted(want, have)) {
        hints.push_back("'" + have + "' for '" + want + "'");
        break;
      }
  std::string message = "'" + path + "' does not fit the model's weights";
  if (!missing.empty())
    message += "; missing: " + listNames(missing);
  if (!unexpected.empty())
    message += "; unexpected: " + listNames(unexpected);
  if (!hints.empty())
    message += "; did you mean " + listNames(hints) +
               "? (save the submodule's state_dict, or strip the prefix)";
  if (!unexpected.empty())
    message += "; non-strict binding ignores unexpected tensors";
  throw Failure(message);
}

} // namespace

extern "C" {

const char *recur_error_message(const RecurError *error) {
  return error ? error->message.c_str() : "success";
}

void recur_error_free(RecurError *error) { delete error; }

RecurError *recur_model_load(const char *path, RecurModel **result) {
  if (!result)
    return makeError("recur_model_load: the model pointer is null");
  *result = nullptr;
  if (!path)
    return makeError("recur_model_load: the path is null");
  return guarded([&] {
    auto model = std::make_unique<RecurModel>();
    model->path = path;
    // A path, not a library name for dlopen's search.
    std::string file = model->path.find('/') == std::string::npos
                           ? "./" + model->path
                           : model->path;
    model->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!model->handle) {
      const char *reason = dlerror();
      throw Failure("cannot load model '" + model->path +
                    "': " + (reason ? reason : "unknown dlopen error"));
    }
    auto describe = reinterpret_cast<const char *(*)()>(
        dlsym(model->handle, RECUR_MODEL_DESCRIPTION_SYMBOL));
    model->run = reinterpret_cast<void (*)(void **)>(
        dlsym(model->handle, RECUR_MODEL_RUN_SYMBOL));
    if (!describe || !model->run)
      throw Failure("'" + model->path +
                    "' is not a Recur model: it does not "
                    "export " RECUR_MODEL_DESCRIPTION_SYMBOL
                    " and " RECUR_MODEL_RUN_SYMBOL " (build "
                    "models with recur-compile)");
    model->setOmpThreads = reinterpret_cast<void (*)(int)>(
        dlsym(model->handle, "omp_set_num_threads"));
    model->descriptionJson = describe();
    model->description = parseDescription(model->descriptionJson, model->path);
    if (!model->description.prologueResults.empty()) {
      model->prepare = reinterpret_cast<void (*)(void **)>(
          dlsym(model->handle, RECUR_MODEL_PREPARE_SYMBOL));
      if (!model->prepare)
        throw Failure("'" + model->path +
                      "' describes a weight prologue but does not export " +
                      RECUR_MODEL_PREPARE_SYMBOL);
    }
    model->backend =
        createBackend(model->handle, model->path, model->description);
    model->weights.resize(model->description.weights.size());
    model->derivedData.resize(model->description.derived.size(), nullptr);
    *result = model.release();
  });
}

void recur_model_free(RecurModel *model) { delete model; }

const char *recur_model_description(const RecurModel *model) {
  return model ? model->descriptionJson.c_str() : "";
}

static const std::vector<TensorSpec> *specsOf(const RecurModel *model,
                                              RecurTensorKind kind) {
  if (!model)
    return nullptr;
  switch (kind) {
  case RECUR_INPUT:
    return &model->description.inputs;
  case RECUR_WEIGHT:
    return &model->description.weights;
  case RECUR_OUTPUT:
    return &model->description.outputs;
  }
  return nullptr;
}

size_t recur_model_num_tensors(const RecurModel *model, RecurTensorKind kind) {
  const std::vector<TensorSpec> *specs = specsOf(model, kind);
  return specs ? specs->size() : 0;
}

RecurError *recur_model_tensor_info(const RecurModel *model,
                                    RecurTensorKind kind, size_t index,
                                    RecurTensorInfo *info) {
  const std::vector<TensorSpec> *specs = specsOf(model, kind);
  if (!specs || !info)
    return makeError("recur_model_tensor_info: null model or info, or an "
                     "unknown tensor kind");
  if (index >= specs->size())
    return makeError("recur_model_tensor_info: index " + std::to_string(index) +
                     " is out of range; the model has " +
                     std::to_string(specs->size()) + " such tensors");
  const TensorSpec &spec = (*specs)[index];
  info->name = spec.name.c_str();
  info->dtype = spec.dtype;
  info->ndim = static_cast<int32_t>(spec.shape.size());
  info->shape = spec.shape.data();
  info->dims = spec.dimNames.data();
  info->index_bound = spec.indexBound;
  info->lengths_steps = spec.sequenceLengths ? spec.lengthsSteps : 0;
  return nullptr;
}

RecurError *recur_model_bind_weight(RecurModel *model, const char *name,
                                    const DLTensor *tensor) {
  if (!model || !name)
    return makeError("recur_model_bind_weight: null model or name");
  return guarded([&] {
    size_t index;
    const TensorSpec &spec = model->weightNamed(name, index);
    int64_t sizes[2] = {-1, -1};
    std::string what = "weight '" + spec.name + "'";
    size_t bytes = checkTensor(what, spec, tensor, sizes, *model->backend);
    std::unique_ptr<Buffer> buffer =
        model->backend->copyWeight(*tensor, dataOf(*tensor), bytes, what);
    std::lock_guard<std::mutex> guard(model->prologueMutex);
    model->weights[index] = std::move(buffer);
    model->derivedStale = true;
  });
}

RecurError *recur_model_read_weight(RecurModel *model, const char *name,
                                    DLTensor *host) {
  if (!model || !name || !host)
    return makeError("recur_model_read_weight: null model, name or tensor");
  return guarded([&] {
    size_t index;
    const TensorSpec &spec = model->weightNamed(name, index);
    std::string what = "the copy of weight '" + spec.name + "'";
    if (!isHostMemory(*host))
      throw Failure(what + " must be in host memory, got " +
                    deviceTypeName(host->device.device_type));
    int64_t sizes[2] = {-1, -1};
    size_t bytes = checkTensor(what, spec, host, sizes, *model->backend);
    // Not while a run updates it.
    std::unique_lock<std::mutex> training = model->lockWeightsIfTraining();
    std::unique_lock<std::mutex> lock = model->backend->lockRun();
    model->copyWeightToHost(index, bytes, const_cast<void *>(dataOf(*host)));
  });
}

RecurError *recur_model_save_weights(RecurModel *model, const char *path) {
  if (!model || !path)
    return makeError("recur_model_save_weights: null model or path");
  return guarded([&] {
    recur::safetensors::Writer writer;
    std::string error;
    {
      // One snapshot: no run changes the weights between two reads.
      std::unique_lock<std::mutex> training = model->lockWeightsIfTraining();
      std::unique_lock<std::mutex> lock = model->backend->lockRun();
      for (size_t index = 0; index < model->description.weights.size();
           ++index) {
        const TensorSpec &spec = model->description.weights[index];
        const recur::Dtype *dtype = recur::findDtype(spec.dtype);
        int64_t bytes;
        if (!dtype ||
            !recur::checkedByteCount(
                spec.shape,
                static_cast<int64_t>(recur::elementBytes(spec.dtype)), bytes))
          throw Failure("weight '" + spec.name + "' of shape " +
                        spec.formattedShape() + " and dtype " + spec.dtypeName +
                        " cannot be saved");
        std::vector<uint8_t> data(bytes);
        model->copyWeightToHost(index, bytes, data.data());
        if (!writer.add(spec.name, dtype->safetensors, spec.shape, data.data(),
                        data.size(), error))
          throw Failure(error);
      }
    }
    if (!writer.write(path, error))
      throw Failure(error);
  });
}

RecurError *recur_model_bind_weights_file(RecurModel *model, const char *path) {
  return recur_model_bind_weights_file_mode(model, path, RECUR_BIND_STRICT);
}

RecurError *recur_model_bind_weights_file_mode(RecurModel *model,
                                               const char *path, int mode) {
  if (!model || !path)
    return makeError("recur_model_bind_weights_file: null model or path");
  bool convertToBf16 = mode & RECUR_BIND_CONVERT_TO_BF16;
  int strictness = mode & ~RECUR_BIND_CONVERT_TO_BF16;
  if (strictness != RECUR_BIND_STRICT && strictness != RECUR_BIND_NON_STRICT)
    return makeError("recur_model_bind_weights_file_mode: unknown mode " +
                     std::to_string(mode));
  return guarded([&] {
    std::string error;
    std::unique_ptr<recur::safetensors::File> file =
        recur::safetensors::File::open(path, error);
    if (!file)
      throw Failure(error);
    const std::vector<TensorSpec> &specs = model->description.weights;
    if (strictness == RECUR_BIND_STRICT)
      checkNamesMatch(specs, *file, path);
    // Check and copy everything before changing anything.
    std::vector<std::pair<size_t, std::unique_ptr<Buffer>>> bound;
    for (size_t index = 0; index < specs.size(); ++index) {
      const TensorSpec &spec = specs[index];
      const recur::safetensors::Entry *entry = file->find(spec.name);
      if (!entry)
        continue; // only in non-strict mode
      std::string where = "weight '" + spec.name + "' in '" + path + "'";
      std::string expected = recur::findDtype(spec.dtype)->safetensors;
      bool rounded =
          convertToBf16 && entry->dtype == "F32" && recur::isBf16(spec.dtype);
      if (entry->dtype != expected && !rounded)
        throw Failure(where + " has dtype " + entry->dtype + ", expected " +
                      expected +
                      (recur::isBf16(spec.dtype) && entry->dtype == "F32"
                           ? " (RECUR_BIND_CONVERT_TO_BF16, recur-run "
                             "--convert-weights, rounds F32 weights)"
                           : ""));
      if (entry->shape != spec.shape)
        throw Failure(where + " has shape " + formatShape(entry->shape) +
                      ", expected " + formatShape(spec.shape));
      std::string what = "weight '" + spec.name + "'";
      if (rounded) {
        std::vector<uint8_t> bf16 =
            recur::floatsToBf16Bytes(entry->data, entry->size / sizeof(float));
        bound.emplace_back(index, model->backend->copyHostWeight(
                                      bf16.data(), bf16.size(), what));
      } else {
        bound.emplace_back(index, model->backend->copyHostWeight(
                                      entry->data, entry->size, what));
      }
    }
    std::lock_guard<std::mutex> guard(model->prologueMutex);
    for (auto &[index, buffer] : bound)
      model->weights[index] = std::move(buffer);
    model->derivedStale = true;
  });
}

RecurError *recur_model_set_host_outputs(RecurModel *model, int host) {
  if (!model)
    return makeError("recur_model_set_host_outputs: null model");
  model->backend->setHostOutputs(host != 0);
  return nullptr;
}

const char *recur_model_device(const RecurModel *model) {
  return model ? model->backend->deviceName().c_str() : "";
}

RecurTarget recur_model_target(const RecurModel *model) {
  return model ? model->description.target : RECUR_TARGET_CPU;
}

const char *recur_model_run_report(const RecurModel *model) {
  return model ? model->backend->runReport().c_str() : "";
}

RecurError *recur_cuda_check(void) {
  std::string reason;
  return recur::cuda::available(reason) ? nullptr : makeError(reason);
}

RecurError *recur_model_set_threads(RecurModel *model, int threads) {
  if (!model)
    return makeError("recur_model_set_threads: null model");
  if (threads < 1 || threads > kMaxThreads)
    return makeError("thread count must be between 1 and " +
                     std::to_string(kMaxThreads) + ", got " +
                     std::to_string(threads));
  model->threads = threads;
  return nullptr;
}

RecurError *recur_model_run(RecurModel *model, const DLTensor *const *inputs,
                            size_t numInputs, DLManagedTensor **outputs,
                            size_t numOutputs) {
  if (!model)
    return makeError("recur_model_run: null model");
  return guarded([&] {
    const ModelDescription &description = model->description;
    if (numInputs != description.inputs.size()) {
      std::string names;
      for (const TensorSpec &spec : description.inputs)
        names += (names.empty() ? "" : ", ") + spec.name;
      throw Failure("the model takes " +
                    std::to_string(description.inputs.size()) + " input(s) (" +
                    names + "), got " + std::to_string(numInputs));
    }
    if (numOutputs != description.outputs.size() || !outputs)
      throw Failure("the model returns " +
                    std::to_string(description.outputs.size()) +
                    " output(s), the caller has room for " +
                    std::to_string(outputs ? numOutputs : 0));
    for (size_t i = 0; i < description.weights.size(); ++i)
      if (!model->weights[i])
        throw Failure("weight '" + description.weights[i].name +
                      "' is not bound: bind it with recur_model_bind_weight "
                      "or a safetensors file");
    if (numInputs && !inputs)
      throw Failure("recur_model_run: the inputs array is null");

    std::unique_lock<std::mutex> training = model->lockWeightsIfTraining();
    std::unique_lock<std::mutex> lock = model->backend->lockRun();
    // Every input is checked before any is staged: a failed call leaves no
    // copy in flight.
    int64_t sizes[2] = {-1, -1};
    std::vector<size_t> inputBytes;
    for (size_t i = 0; i < numInputs; ++i) {
      const TensorSpec &spec = description.inputs[i];
      std::string what = "input '" + spec.name + "'";
      inputBytes.push_back(
          checkTensor(what, spec, inputs[i], sizes, *model->backend));
      checkIndices(what, spec, *inputs[i], inputBytes.back(), *model->backend);
    }
    // Lengths are checked against T, which any of the inputs may set.
    for (size_t i = 0; i < numInputs; ++i)
      checkSequenceLengths("input '" + description.inputs[i].name + "'",
                           description.inputs[i], *inputs[i], inputBytes[i],
                           sizes[0], *model->backend);
    std::vector<std::vector<int64_t>> arguments(description.numArguments);
    for (size_t i = 0; i < numInputs; ++i) {
      const TensorSpec &spec = description.inputs[i];
      const void *data = model->backend->stageInput(
          i, *inputs[i], dataOf(*inputs[i]), inputBytes[i],
          "input '" + spec.name + "'");
      arguments[spec.argumentIndex] = descriptor(data, shapeOf(*inputs[i]));
    }
    for (size_t i = 0; i < description.weights.size(); ++i)
      arguments[description.weights[i].argumentIndex] =
          descriptor(model->weights[i]->data(), description.weights[i].shape);
    prepareDerived(*model);
    for (size_t i = 0; i < description.derived.size(); ++i)
      arguments[description.derived[i].argumentIndex] =
          descriptor(model->derivedData[i], description.derived[i].shape);

    std::vector<size_t> ranks;
    for (const TensorSpec &spec : description.outputs)
      ranks.push_back(spec.shape.size());
    ResultDescriptors results(ranks);
    std::vector<void *> args = {results.storage()};
    for (std::vector<int64_t> &words : arguments)
      args.push_back(words.data());

    if (model->threads > 0 && model->setOmpThreads)
      model->setOmpThreads(model->threads);
    try {
      model->backend->run(model->run, args.data());
    } catch (...) {
      if (model->backend->failedRunsSetResults()) {
        std::vector<bool> owned = results.owned(arguments);
        for (size_t i = 0; i < results.size(); ++i)
          if (owned[i])
            model->backend->freeResult(results.allocated(i));
      }
      throw;
    }

    // Outputs are handed over only when all of them are ready. The model's
    // buffers that no output took over are freed after all are made (later
    // outputs may copy from them), and on a failure too.
    std::vector<bool> owned = results.owned(arguments);
    std::vector<DLManagedTensor *> built(results.size(), nullptr);
    std::vector<bool> tookOver(results.size(), false);
    auto freeUntaken = [&] {
      for (size_t i = 0; i < results.size(); ++i)
        if (owned[i] && !tookOver[i])
          model->backend->freeResult(results.allocated(i));
    };
    try {
      for (size_t i = 0; i < results.size(); ++i) {
        bool took = false;
        built[i] = makeOutput(*model, i, results, owned[i], took);
        tookOver[i] = took;
      }
    } catch (...) {
      for (DLManagedTensor *tensor : built)
        if (tensor)
          tensor->deleter(tensor);
      // Buffers taken over went with their tensors.
      freeUntaken();
      throw;
    }
    freeUntaken();
    for (size_t i = 0; i < built.size(); ++i)
      outputs[i] = built[i];
  });
}

} // extern "C"
