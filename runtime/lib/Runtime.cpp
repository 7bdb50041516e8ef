//===- Runtime.cpp - librecur-runtime ------------------------------------===//
//
// A compiled model exports
//   const char *recur_compiled_model_description(void);  JSON
//   void recur_compiled_model_run(void **args);  args[0]: result descriptors,
//                                                args[1..]: argument descriptors
// where a descriptor is MLIR's memref descriptor for a rank-R memref:
//   {void *allocated, void *aligned, int64_t offset, int64_t sizes[R],
//    int64_t strides[R]}
// Results are allocated by the model (malloc on the CPU, the CUDA backend's
// allocator on the GPU); ownership passes to the caller through the
// DLManagedTensor deleter. CUDA models take device pointers for everything
// (Cuda.h).
//
//===----------------------------------------------------------------------===//

#include "recur/runtime.h"

#include "Cuda.h"
#include "Safetensors.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct RecurError {
  std::string message;
};

namespace {

using nlohmann::json;

/// Thrown inside the runtime, turned into a RecurError at the C boundary.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorSpec {
  std::string name;
  std::string dtypeName; // "f32", "i64", ...
  DLDataType dtype{};
  std::vector<int64_t> shape; // -1: dynamic
  std::vector<std::string> dims; // "T", "B" or "" (static), per dimension
  std::vector<const char *> dimNames; // C strings of `dims`, for the C API
  int64_t indexBound = 0;
  size_t argumentIndex = 0; // position in the entry's argument list
};

DLDataType parseDtype(const std::string &name) {
  if (name == "f32")
    return {kDLFloat, 32, 1};
  if (name == "f64")
    return {kDLFloat, 64, 1};
  if (name == "f16")
    return {kDLFloat, 16, 1};
  if (name == "bf16")
    return {kDLBfloat, 16, 1};
  if (name == "i64")
    return {kDLInt, 64, 1};
  if (name == "i32")
    return {kDLInt, 32, 1};
  throw Failure("unknown dtype '" + name + "'");
}

std::string dtypeName(DLDataType dtype) {
  std::string base;
  switch (dtype.code) {
  case kDLFloat:
    base = "f";
    break;
  case kDLBfloat:
    base = "bf";
    break;
  case kDLInt:
    base = "i";
    break;
  case kDLUInt:
    base = "u";
    break;
  default:
    base = "code" + std::to_string(dtype.code) + "_";
  }
  std::string name = base + std::to_string(dtype.bits);
  if (dtype.lanes != 1)
    name += "x" + std::to_string(dtype.lanes);
  return name;
}

/// The safetensors spelling of one of our dtypes.
std::string safetensorsDtype(const std::string &name) {
  if (name == "bf16")
    return "BF16";
  std::string upper = name;
  for (char &c : upper)
    c = std::toupper(static_cast<unsigned char>(c));
  return upper; // F32, F16, F64, I64, I32
}

bool sameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

std::string formatShape(const std::vector<int64_t> &shape,
                        const std::vector<std::string> *dims = nullptr) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    if (shape[i] < 0 && dims)
      text += (*dims)[i];
    else
      text += std::to_string(shape[i]);
  }
  return text + "]";
}

size_t elementBytes(DLDataType dtype) { return (dtype.bits * dtype.lanes + 7) / 8; }

/// Elements of a row-major tensor of `shape`; throws when a size is negative
/// or the count overflows, so that no shape makes a small buffer look large
/// (or a large one small).
int64_t numElements(const std::vector<int64_t> &shape,
                    const std::string &what = "a tensor") {
  int64_t count = 1;
  for (int64_t size : shape)
    if (size < 0 || __builtin_mul_overflow(count, size, &count))
      throw Failure(what + " has shape " + formatShape(shape) +
                    ", whose element count does not fit in 64 bits");
  return count;
}

/// Bytes of a row-major tensor, checked like its element count.
size_t byteCount(const std::vector<int64_t> &shape, DLDataType dtype,
                 const std::string &what = "a tensor") {
  int64_t bytes;
  if (__builtin_mul_overflow(numElements(shape, what),
                             static_cast<int64_t>(elementBytes(dtype)), &bytes))
    throw Failure(what + " has shape " + formatShape(shape) +
                  ", whose size in bytes does not fit in 64 bits");
  return static_cast<size_t>(bytes);
}

/// A 64-byte aligned copy of a weight.
struct AlignedBuffer {
  void *data = nullptr;
  size_t bytes = 0;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) : bytes(size) {
    data = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    if (!data)
      throw Failure("out of memory allocating " + std::to_string(size) +
                    " bytes");
  }
  AlignedBuffer(AlignedBuffer &&other) noexcept
      : data(other.data), bytes(other.bytes) {
    other.data = nullptr;
  }
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept {
    std::swap(data, other.data);
    std::swap(bytes, other.bytes);
    return *this;
  }
  ~AlignedBuffer() { std::free(data); }
};

/// MLIR's memref descriptor for rank R, as int64 words.
std::vector<int64_t> descriptor(const void *data,
                                const std::vector<int64_t> &shape) {
  std::vector<int64_t> words(3 + 2 * shape.size());
  words[0] = reinterpret_cast<int64_t>(data);
  words[1] = reinterpret_cast<int64_t>(data);
  words[2] = 0;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    words[3 + i] = shape[i];
    words[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return words;
}

struct OutputContext {
  void *allocated;
  bool onDevice;
  std::vector<int64_t> shape;
};

/// Threads a model may be asked for: more than any machine's cores, few
/// enough that OpenMP can create them (libomp aborts the process when it
/// cannot).
constexpr int kMaxThreads = 1024;

void deleteOutput(DLManagedTensor *tensor) {
  auto *context = static_cast<OutputContext *>(tensor->manager_ctx);
  if (context->onDevice)
    recur::cuda::ModelGpu::freeModelAllocation(context->allocated);
  else
    std::free(context->allocated);
  delete context;
  delete tensor;
}

std::string deviceTypeName(int type) {
  switch (type) {
  case kDLCPU:
    return "CPU";
  case kDLCUDA:
    return "CUDA";
  case kDLCUDAHost:
    return "CUDA host (pinned)";
  case kDLCUDAManaged:
    return "CUDA managed";
  default:
    return "DLPack device type " + std::to_string(type);
  }
}

} // namespace

struct RecurModel {
  std::string path;
  void *handle = nullptr;
  void (*run)(void **) = nullptr;
  void (*setOmpThreads)(int) = nullptr;
  int64_t (*failedAllocation)() = nullptr; // CPU models (runtime.h)
  std::string descriptionJson;
  std::vector<TensorSpec> inputs, weights, outputs;
  size_t numArguments = 0;
  std::vector<AlignedBuffer> weightData; // parallel to `weights` (CPU)
  std::vector<bool> weightBound;
  int threads = 0; // 0: OpenMP's default

  // CUDA models: weights live on the device from bind time; host inputs are
  // uploaded into buffers kept between runs.
  std::string cudaArch; // empty for CPU models
  std::unique_ptr<recur::cuda::ModelGpu> gpu;
  std::vector<recur::cuda::DeviceBuffer> deviceWeights; // parallel to `weights`
  std::vector<recur::cuda::DeviceBuffer> inputBuffers;  // parallel to `inputs`
  bool hostOutputs = false;
  /// A CUDA model's stream, error state and input buffers serve one run at
  /// a time.
  std::mutex gpuRun;

  ~RecurModel() {
    // The kernels are unloaded by the library's code: before dlclose.
    gpu.reset();
    if (handle)
      dlclose(handle);
  }

  bool onGpu() const { return !cudaArch.empty(); }

  const void *weightPointer(size_t index) const {
    return onGpu() ? deviceWeights[index].data() : weightData[index].data;
  }

  const TensorSpec *findWeight(const std::string &name, size_t &index) const {
    for (index = 0; index < weights.size(); ++index)
      if (weights[index].name == name)
        return &weights[index];
    return nullptr;
  }
};

namespace {

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

TensorSpec parseSpec(const json &entry) {
  TensorSpec spec;
  spec.name = entry.at("name").get<std::string>();
  spec.dtypeName = entry.at("dtype").get<std::string>();
  spec.dtype = parseDtype(spec.dtypeName);
  spec.shape = entry.at("shape").get<std::vector<int64_t>>();
  for (const json &dim : entry.at("dims"))
    spec.dims.push_back(dim.is_null() ? "" : dim.get<std::string>());
  if (spec.dims.size() != spec.shape.size())
    throw Failure("tensor '" + spec.name + "' has " +
                  std::to_string(spec.shape.size()) + " sizes but " +
                  std::to_string(spec.dims.size()) + " dims");
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if ((spec.shape[i] < 0) != (spec.dims[i] == "T" || spec.dims[i] == "B"))
      throw Failure("tensor '" + spec.name + "' has a dynamic size that is " +
                    "not T or B");
  if (entry.contains("range"))
    spec.indexBound = entry.at("range").at(1).get<int64_t>();
  return spec;
}

void parseDescription(RecurModel &model) {
  json description;
  try {
    description = json::parse(model.descriptionJson);
    int version = description.at("abi_version").get<int>();
    if (version != RECUR_MODEL_ABI_VERSION)
      throw Failure("'" + model.path + "' was compiled for model ABI " +
                    std::to_string(version) + "; this runtime reads ABI " +
                    std::to_string(RECUR_MODEL_ABI_VERSION) +
                    ": recompile it with this build's recur-compile");
    std::string target = description.at("target").get<std::string>();
    if (target == "cuda")
      model.cudaArch = description.at("cuda_arch").get<std::string>();
    else if (target != "cpu")
      throw Failure("'" + model.path + "' was compiled for target '" + target +
                    "'; this runtime runs cpu and cuda models");
    const json &arguments = description.at("arguments");
    model.numArguments = arguments.size();
    for (size_t index = 0; index < arguments.size(); ++index) {
      TensorSpec spec = parseSpec(arguments[index]);
      spec.argumentIndex = index;
      if (arguments[index].at("kind") == "input")
        model.inputs.push_back(spec);
      else
        model.weights.push_back(spec);
    }
    for (const json &output : description.at("outputs"))
      model.outputs.push_back(parseSpec(output));
  } catch (const json::exception &error) {
    throw Failure("'" + model.path +
                  "' has a corrupt model description: " + error.what());
  }
  for (auto *specs : {&model.inputs, &model.weights, &model.outputs})
    for (TensorSpec &spec : *specs)
      for (const std::string &dim : spec.dims)
        spec.dimNames.push_back(dim.c_str());
  model.weightData.resize(model.weights.size());
  model.deviceWeights.resize(model.weights.size());
  model.inputBuffers.resize(model.inputs.size());
  model.weightBound.assign(model.weights.size(), false);
}

/// Checks a tensor handed to the runtime against its spec; `sizes` maps the
/// dynamic symbols T (0) and B (1) to values seen so far (-1 if unset).
bool isHostMemory(const DLTensor *tensor) {
  return tensor->device.device_type == kDLCPU ||
         tensor->device.device_type == kDLCUDAHost;
}

void checkTensor(const std::string &what, const TensorSpec &spec,
                 const DLTensor *tensor, int64_t sizes[2],
                 const RecurModel &model) {
  if (!tensor)
    throw Failure(what + " is null");
  int type = tensor->device.device_type;
  if (!model.onGpu() && !isHostMemory(tensor))
    throw Failure(what + " is in " + deviceTypeName(type) +
                  " memory; this model runs on the CPU and needs host memory");
  if (model.onGpu() && !isHostMemory(tensor)) {
    if (type != kDLCUDA && type != kDLCUDAManaged)
      throw Failure(what + " is in " + deviceTypeName(type) +
                    " memory; a CUDA model takes host or CUDA tensors");
    if (tensor->device.device_id != model.gpu->deviceOrdinal())
      throw Failure(what + " is on CUDA device " +
                    std::to_string(tensor->device.device_id) +
                    "; the model runs on " + model.gpu->deviceName());
  }
  if (!sameDtype(tensor->dtype, spec.dtype))
    throw Failure(what + " has dtype " + dtypeName(tensor->dtype) +
                  ", expected " + spec.dtypeName);
  std::vector<int64_t> shape(tensor->shape, tensor->shape + tensor->ndim);
  bool matches = shape.size() == spec.shape.size();
  for (size_t i = 0; matches && i < shape.size(); ++i)
    matches = spec.shape[i] < 0 ? shape[i] >= 0 : shape[i] == spec.shape[i];
  if (!matches)
    throw Failure(what + " has shape " + formatShape(shape) + ", expected " +
                  formatShape(spec.shape, &spec.dims));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (spec.shape[i] >= 0)
      continue;
    const std::string &symbol = spec.dims[i];
    int64_t &seen = sizes[symbol == "T" ? 0 : 1];
    if (shape[i] < 1)
      throw Failure(what + " has " + symbol + " = " + std::to_string(shape[i]) +
                    "; " + symbol + " must be at least 1");
    if (seen >= 0 && seen != shape[i])
      throw Failure(what + " has " + symbol + " = " + std::to_string(shape[i]) +
                    " but an earlier input has " + symbol + " = " +
                    std::to_string(seen));
    seen = shape[i];
  }
  if (tensor->strides) {
    int64_t expected = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      if (shape[i] != 1 && tensor->strides[i] != expected)
        throw Failure(what + " is not contiguous (strides " +
                      formatShape(std::vector<int64_t>(
                          tensor->strides, tensor->strides + tensor->ndim)) +
                      "); pass a row-major contiguous tensor");
      expected *= shape[i];
    }
  }
  // Checked for every tensor: everything after this trusts its size.
  size_t bytes = byteCount(shape, tensor->dtype, what);
  if (!tensor->data && bytes > 0)
    throw Failure(what + " has no data");
}

const void *dataOf(const DLTensor *tensor) {
  return static_cast<const char *>(tensor->data) + tensor->byte_offset;
}

size_t bytesOf(const DLTensor *tensor) {
  return byteCount(
      std::vector<int64_t>(tensor->shape, tensor->shape + tensor->ndim),
      tensor->dtype);
}

/// An index outside the table would make the kernel read out of bounds, so
/// indices are checked wherever they live (device ones through a copy).
void checkIndices(const std::string &what, const TensorSpec &spec,
                  const DLTensor *tensor, const RecurModel &model) {
  if (spec.indexBound <= 0 || spec.dtype.code != kDLInt)
    return;
  int64_t count = numElements(
      std::vector<int64_t>(tensor->shape, tensor->shape + tensor->ndim), what);
  const void *data = dataOf(tensor);
  AlignedBuffer hostCopy;
  if (!isHostMemory(tensor)) {
    hostCopy = AlignedBuffer(bytesOf(tensor));
    model.gpu->copyToHost(hostCopy.data, data, hostCopy.bytes);
    data = hostCopy.data;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t value = spec.dtype.bits == 64
                        ? static_cast<const int64_t *>(data)[i]
                        : static_cast<const int32_t *>(data)[i];
    if (value < 0 || value >= spec.indexBound)
      throw Failure(what + " holds " + std::to_string(value) +
                    " at flat index " + std::to_string(i) +
                    "; values must lie in [0, " +
                    std::to_string(spec.indexBound) + ")");
  }
}

AlignedBuffer copyOf(const void *data, size_t bytes) {
  AlignedBuffer buffer(bytes);
  if (bytes)
    std::memcpy(buffer.data, data, bytes);
  return buffer;
}

/// Which result buffers the outputs may take over. A model may return an
/// input or a weight, or one buffer as two results (a value returned twice,
/// results that CSE merged, views of one allocation); those outputs get a copy
/// instead, so that every output owns exactly one allocation and nothing is
/// freed twice or freed from under the runtime.
std::vector<bool> ownedResults(const std::vector<int64_t *> &results,
                               const std::vector<std::vector<int64_t>> &arguments) {
  std::set<int64_t> taken;
  for (const std::vector<int64_t> &words : arguments)
    taken.insert(words[0]);
  std::vector<bool> owned;
  for (const int64_t *words : results)
    owned.push_back(words[0] != 0 && taken.insert(words[0]).second);
  return owned;
}

/// A tensor for output `index` (memref descriptor `words`): it takes over the
/// buffer if `owned`, else holds a copy; a CUDA model with host outputs gives
/// a host copy either way.
DLManagedTensor *makeOutput(const RecurModel &model, size_t index,
                            const int64_t *words, bool owned) {
  const TensorSpec &spec = model.outputs[index];
  std::string what = "output '" + spec.name + "'";
  size_t rank = spec.shape.size();
  size_t elementSize = elementBytes(spec.dtype);
  auto context = std::make_unique<OutputContext>(OutputContext{
      reinterpret_cast<void *>(words[0]), model.onGpu(),
      std::vector<int64_t>(words + 3, words + 3 + rank)});
  auto tensor = std::make_unique<DLManagedTensor>();
  void *data = reinterpret_cast<char *>(words[1]) + words[2] * elementSize;
  size_t bytes = byteCount(context->shape, spec.dtype, what);
  auto hostCopy = [&] {
    // A malloc'd buffer, the kind a CPU model returns.
    void *host = std::malloc(bytes ? bytes : 1);
    if (!host)
      throw Failure("out of host memory copying " + what + " (" +
                    std::to_string(bytes) + " bytes)");
    try {
      if (model.onGpu())
        model.gpu->copyToHost(host, data, bytes);
      else if (bytes)
        std::memcpy(host, data, bytes);
    } catch (...) {
      std::free(host);
      throw;
    }
    return host;
  };
  if (model.onGpu() && model.hostOutputs) {
    void *host = hostCopy();
    if (owned)
      recur::cuda::ModelGpu::freeModelAllocation(context->allocated);
    context->allocated = data = host;
    context->onDevice = false;
  } else if (!owned) {
    context->allocated = data =
        model.onGpu() ? model.gpu->duplicate(data, bytes, what) : hostCopy();
  }
  tensor->dl_tensor.data = data;
  tensor->dl_tensor.device = {context->onDevice ? kDLCUDA : kDLCPU,
                              context->onDevice ? model.gpu->deviceOrdinal()
                                                : 0};
  tensor->dl_tensor.ndim = static_cast<int32_t>(rank);
  tensor->dl_tensor.dtype = spec.dtype;
  tensor->dl_tensor.shape = context->shape.data();
  tensor->dl_tensor.strides = nullptr; // identity layout
  tensor->dl_tensor.byte_offset = 0;
  tensor->manager_ctx = context.release();
  tensor->deleter = deleteOutput;
  return tensor.release();
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
void checkNamesMatch(const RecurModel &model,
                     const recur::safetensors::File &file,
                     const std::string &path) {
  std::vector<std::string> missing, unexpected, hints;
  std::set<std::string> known;
  for (const TensorSpec &spec : model.weights) {
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
                    "' is not a Recur model: it does not export "
                    RECUR_MODEL_DESCRIPTION_SYMBOL " and " RECUR_MODEL_RUN_SYMBOL " (build "
                    "models with recur-compile)");
    model->setOmpThreads = reinterpret_cast<void (*)(int)>(
        dlsym(model->handle, "omp_set_num_threads"));
    model->failedAllocation = reinterpret_cast<int64_t (*)()>(
        dlsym(model->handle, RECUR_MODEL_FAILED_ALLOCATION_SYMBOL));
    model->descriptionJson = describe();
    parseDescription(*model);
    if (model->onGpu()) {
      model->gpu = recur::cuda::ModelGpu::load(model->handle, model->path,
                                               model->cudaArch);
    }
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
    return &model->inputs;
  case RECUR_WEIGHT:
    return &model->weights;
  case RECUR_OUTPUT:
    return &model->outputs;
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
  return nullptr;
}

RecurError *recur_model_bind_weight(RecurModel *model, const char *name,
                                    const DLTensor *tensor) {
  if (!model || !name)
    return makeError("recur_model_bind_weight: null model or name");
  return guarded([&] {
    size_t index;
    const TensorSpec *spec = model->findWeight(name, index);
    if (!spec)
      throw Failure("the model has no weight '" + std::string(name) + "'");
    int64_t sizes[2] = {-1, -1};
    std::string what = "weight '" + spec->name + "'";
    checkTensor(what, *spec, tensor, sizes, *model);
    size_t bytes = byteCount(spec->shape, spec->dtype, what);
    if (model->onGpu()) {
      recur::cuda::DeviceBuffer buffer(bytes, what);
      if (isHostMemory(tensor))
        model->gpu->copyToDevice(buffer.data(), dataOf(tensor), bytes);
      else
        model->gpu->copyOnDevice(buffer.data(), dataOf(tensor), bytes);
      model->deviceWeights[index] = std::move(buffer);
    } else {
      model->weightData[index] = copyOf(dataOf(tensor), bytes);
    }
    model->weightBound[index] = true;
  });
}

RecurError *recur_model_bind_weights_file(RecurModel *model, const char *path) {
  return recur_model_bind_weights_file_mode(model, path, RECUR_BIND_STRICT);
}

RecurError *recur_model_bind_weights_file_mode(RecurModel *model,
                                               const char *path,
                                               RecurBindMode mode) {
  if (!model || !path)
    return makeError("recur_model_bind_weights_file: null model or path");
  if (mode != RECUR_BIND_STRICT && mode != RECUR_BIND_NON_STRICT)
    return makeError("recur_model_bind_weights_file_mode: unknown mode " +
                     std::to_string(static_cast<int>(mode)));
  return guarded([&] {
    std::string error;
    std::unique_ptr<recur::safetensors::File> file =
        recur::safetensors::File::open(path, error);
    if (!file)
      throw Failure(error);
    if (mode == RECUR_BIND_STRICT)
      checkNamesMatch(*model, *file, path);
    // Check everything before changing anything.
    std::vector<std::pair<size_t, const recur::safetensors::Entry *>> entries;
    for (size_t index = 0; index < model->weights.size(); ++index) {
      const TensorSpec &spec = model->weights[index];
      const recur::safetensors::Entry *entry = file->find(spec.name);
      if (!entry)
        continue; // only in non-strict mode
      std::string where = "weight '" + spec.name + "' in '" + path + "'";
      if (entry->dtype != safetensorsDtype(spec.dtypeName))
        throw Failure(where + " has dtype " + entry->dtype + ", expected " +
                      safetensorsDtype(spec.dtypeName));
      if (entry->shape != spec.shape)
        throw Failure(where + " has shape " + formatShape(entry->shape) +
                      ", expected " + formatShape(spec.shape));
      entries.push_back({index, entry});
    }
    if (model->onGpu()) {
      std::vector<recur::cuda::DeviceBuffer> data;
      for (auto [index, entry] : entries) {
        data.emplace_back(entry->size,
                          "weight '" + model->weights[index].name + "'");
        model->gpu->copyToDevice(data.back().data(), entry->data, entry->size);
      }
      for (size_t i = 0; i < entries.size(); ++i)
        model->deviceWeights[entries[i].first] = std::move(data[i]);
    } else {
      std::vector<AlignedBuffer> data;
      for (auto [index, entry] : entries)
        data.push_back(copyOf(entry->data, entry->size));
      for (size_t i = 0; i < entries.size(); ++i)
        model->weightData[entries[i].first] = std::move(data[i]);
    }
    for (auto [index, entry] : entries)
      model->weightBound[index] = true;
  });
}

RecurError *recur_model_set_host_outputs(RecurModel *model, int host) {
  if (!model)
    return makeError("recur_model_set_host_outputs: null model");
  model->hostOutputs = host != 0;
  return nullptr;
}

const char *recur_model_device(const RecurModel *model) {
  if (!model)
    return "";
  return model->gpu ? model->gpu->deviceName().c_str() : "cpu";
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
    if (numInputs != model->inputs.size()) {
      std::string names;
      for (const TensorSpec &spec : model->inputs)
        names += (names.empty() ? "" : ", ") + spec.name;
      throw Failure("the model takes " + std::to_string(model->inputs.size()) +
                    " input(s) (" + names + "), got " +
                    std::to_string(numInputs));
    }
    if (numOutputs != model->outputs.size() || !outputs)
      throw Failure("the model returns " +
                    std::to_string(model->outputs.size()) +
                    " output(s), the caller has room for " +
                    std::to_string(outputs ? numOutputs : 0));
    for (size_t i = 0; i < model->weights.size(); ++i)
      if (!model->weightBound[i])
        throw Failure("weight '" + model->weights[i].name +
                      "' is not bound: bind it with recur_model_bind_weight "
                      "or a safetensors file");
    if (numInputs && !inputs)
      throw Failure("recur_model_run: the inputs array is null");

    std::unique_lock<std::mutex> gpuLock(model->gpuRun, std::defer_lock);
    if (model->onGpu())
      gpuLock.lock();
    // Every input is checked before any is uploaded: a failed call leaves no
    // copy in flight.
    int64_t sizes[2] = {-1, -1};
    for (size_t i = 0; i < numInputs; ++i) {
      const TensorSpec &spec = model->inputs[i];
      std::string what = "input '" + spec.name + "'";
      checkTensor(what, spec, inputs[i], sizes, *model);
      checkIndices(what, spec, inputs[i], *model);
    }
    std::vector<std::vector<int64_t>> descriptors(model->numArguments);
    for (size_t i = 0; i < numInputs; ++i) {
      const TensorSpec &spec = model->inputs[i];
      const void *data = dataOf(inputs[i]);
      if (model->onGpu() && isHostMemory(inputs[i])) {
        size_t bytes = bytesOf(inputs[i]);
        recur::cuda::DeviceBuffer &buffer = model->inputBuffers[i];
        if (buffer.size() < bytes)
          buffer =
              recur::cuda::DeviceBuffer(bytes, "input '" + spec.name + "'");
        model->gpu->copyToDeviceAsync(buffer.data(), data, bytes);
        data = buffer.data();
      }
      descriptors[spec.argumentIndex] = descriptor(
          data, std::vector<int64_t>(inputs[i]->shape,
                                     inputs[i]->shape + inputs[i]->ndim));
    }
    for (size_t i = 0; i < model->weights.size(); ++i)
      descriptors[model->weights[i].argumentIndex] =
          descriptor(model->weightPointer(i), model->weights[i].shape);

    size_t resultWords = 0;
    for (const TensorSpec &spec : model->outputs)
      resultWords += 3 + 2 * spec.shape.size();
    std::vector<int64_t> results(resultWords, 0);
    std::vector<void *> args;
    args.push_back(results.data());
    for (std::vector<int64_t> &words : descriptors)
      args.push_back(words.data());

    if (model->threads > 0 && model->setOmpThreads)
      model->setOmpThreads(model->threads);
    std::vector<int64_t *> resultDescriptors;
    for (size_t i = 0, offset = 0; i < model->outputs.size(); ++i) {
      resultDescriptors.push_back(results.data() + offset);
      offset += 3 + 2 * model->outputs[i].shape.size();
    }
    if (model->onGpu()) {
      try {
        model->gpu->run(model->run, args.data());
      } catch (...) {
        std::vector<bool> owned = ownedResults(resultDescriptors, descriptors);
        for (size_t i = 0; i < resultDescriptors.size(); ++i)
          if (owned[i])
            recur::cuda::ModelGpu::freeModelAllocation(
                reinterpret_cast<void *>(resultDescriptors[i][0]));
        throw;
      }
    } else {
      model->run(args.data());
      // The run returned early with its results unset; buffers it had
      // allocated before are lost (the generated code does not track them).
      if (int64_t bytes = model->failedAllocation ? model->failedAllocation() : 0)
        throw Failure("out of memory: the model could not allocate " +
                      std::to_string(bytes) + " bytes for this run");
    }

    // Outputs are handed over only when all of them are ready; on a failure
    // every buffer the model returned is freed.
    std::vector<bool> owned = ownedResults(resultDescriptors, descriptors);
    std::vector<DLManagedTensor *> built(model->outputs.size(), nullptr);
    size_t handedOver = 0; // descriptors whose buffer a tensor now owns
    try {
      for (size_t i = 0; i < model->outputs.size(); ++i) {
        built[i] = makeOutput(*model, i, resultDescriptors[i], owned[i]);
        ++handedOver;
      }
    } catch (...) {
      for (DLManagedTensor *tensor : built)
        if (tensor)
          tensor->deleter(tensor);
      for (size_t i = handedOver; i < resultDescriptors.size(); ++i) {
        if (!owned[i])
          continue;
        void *allocated = reinterpret_cast<void *>(resultDescriptors[i][0]);
        if (model->onGpu())
          recur::cuda::ModelGpu::freeModelAllocation(allocated);
        else
          std::free(allocated);
      }
      throw;
    }
    for (size_t i = 0; i < built.size(); ++i)
      outputs[i] = built[i];
  });
}

} // extern "C"
