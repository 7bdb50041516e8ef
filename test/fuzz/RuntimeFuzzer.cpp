//===- RuntimeFuzzer.cpp - Fuzz librecur-runtime's C API ------------------===//
//
// Plays the input as a short session of C API calls on one of the small CPU
// models compiled for this fuzzer (RECUR_FUZZ_MODELS): weights bound from
// safetensors files (well-formed, damaged, or raw input bytes) and from
// DLPack tensors with fuzzed dtype, shape, strides, offset and device; runs
// with well-formed or fuzzed inputs (token ids in and out of range); thread
// counts, host outputs and tensor queries with fuzzed arguments.
//
// The runtime has to trust that a tensor's data is as large as its shape
// says, so every buffer handed over here is that large (and aligned for its
// dtype). The exceptions are shapes it can check without the data: a size
// too large to allocate here comes with null data, and one whose byte count
// does not fit in 64 bits with null or a few bytes; both must be rejected,
// and so must data misaligned for its dtype.
//
// Outcomes the API defines are checked, and a violation aborts (a libFuzzer
// crash): well-formed calls succeed, a bind that succeeds had the weight's
// dtype and shape, a failed run leaves the outputs untouched, and an output
// holds as many readable elements as its shape says.
//
//===----------------------------------------------------------------------===//

#include "recur/runtime.h"

#include "Safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

/// Caps that keep one input fast and small; the models are tiny.
constexpr size_t kMaxBufferBytes = 1 << 20;
constexpr int64_t kMaxSeq = 8, kMaxBatch = 4;
constexpr int kMaxSteps = 16;
/// Thread counts above this are accepted and handed to OpenMP, which starts
/// up to its system limit (32 here) on the next run: slow, and not what is
/// being fuzzed.
constexpr int kMaxRunThreads = 4;

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "runtime fuzzer: %s\n", what.c_str());
  std::abort();
}

/// The input, read front to back; zeros once it runs out.
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : next(data), end(data + size) {}

  bool empty() const { return next == end; }
  uint8_t byte() { return empty() ? 0 : *next++; }
  /// A little-endian integer of sizeof(T) bytes.
  template <typename T> T integer() {
    std::make_unsigned_t<T> value = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      value |= std::make_unsigned_t<T>(byte()) << (8 * i);
    return T(value);
  }
  /// One of `choices`.
  template <typename T, size_t N> T pick(const T (&choices)[N]) {
    return choices[byte() % N];
  }
  /// Up to `count` bytes, fewer if the input ends first.
  std::vector<uint8_t> take(size_t count) {
    count = std::min(count, size_t(end - next));
    std::vector<uint8_t> bytes(next, next + count);
    next += count;
    return bytes;
  }

private:
  const uint8_t *next;
  const uint8_t *end;
};

/// A tensor of the model, from recur_model_tensor_info.
struct Spec {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape; // -1: dynamic
  std::vector<std::string> dims;
  int64_t indexBound;
};

bool sameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

size_t elementBytes(DLDataType dtype) {
  return (size_t(dtype.bits) * dtype.lanes + 7) / 8;
}

/// The bytes a tensor of `shape` and `dtype` spans; false when that does not
/// fit in 63 bits. Negative sizes span nothing (the tensor is malformed, and
/// the runtime must not read it).
bool spannedBytes(const std::vector<int64_t> &shape, DLDataType dtype,
                  uint64_t &bytes) {
  unsigned __int128 total = elementBytes(dtype);
  bool overflow = false;
  for (int64_t size : shape) {
    if (size <= 0) {
      bytes = 0;
      return true;
    }
    total *= uint64_t(size);
    if (total > uint64_t(INT64_MAX)) {
      overflow = true;
      total = uint64_t(INT64_MAX); // keep multiplying without wrapping
    }
  }
  bytes = uint64_t(total);
  return !overflow;
}

/// Fills `size` bytes at `data` by repeating `pattern` (zeros if empty).
void fill(uint8_t *data, size_t size, const std::vector<uint8_t> &pattern) {
  for (size_t i = 0; !pattern.empty() && i < size; ++i)
    data[i] = pattern[i % pattern.size()];
}

/// The safetensors name of a dtype the models use.
std::string safetensorsDtype(DLDataType dtype) {
  switch (dtype.code) {
  case kDLFloat:
    return "F" + std::to_string(dtype.bits);
  case kDLBfloat:
    return "BF16";
  case kDLInt:
    return "I" + std::to_string(dtype.bits);
  default:
    fail("a model with an unexpected dtype");
  }
}

/// RECUR_FUZZ_TRACE=1 prints every call's outcome, to see what an input
/// (a crash reproducer, say) does.
bool tracing() {
  static const bool enabled = [] {
    const char *setting = std::getenv("RECUR_FUZZ_TRACE");
    return setting && std::strcmp(setting, "0") != 0;
  }();
  return enabled;
}

void trace(const std::string &line) {
  if (tracing())
    std::fprintf(stderr, "%s\n", line.c_str());
}

/// The message of `error`, freed; "" for success.
std::string consume(RecurError *error) {
  if (!error) {
    trace("  ok");
    return "";
  }
  std::string message = recur_error_message(error);
  recur_error_free(error);
  if (message.empty())
    fail("an error with an empty message");
  trace("  error: " + message);
  return message;
}

/// Tensors and the memory behind them, alive for one API call.
class TensorArena {
public:
  DLTensor *newTensor() {
    tensors.push_back(std::make_unique<DLTensor>());
    return tensors.back().get();
  }
  int64_t *newArray(const std::vector<int64_t> &values) {
    arrays.push_back(values);
    return arrays.back().empty() ? nullptr : arrays.back().data();
  }
  /// `size` zero bytes (at least 1, so that a zero-size tensor has an
  /// address).
  uint8_t *newBuffer(size_t size) {
    buffers.emplace_back(std::max<size_t>(size, 1));
    return buffers.back().data();
  }

private:
  std::vector<std::unique_ptr<DLTensor>> tensors;
  std::vector<std::vector<int64_t>> arrays;
  std::vector<std::vector<uint8_t>> buffers;
};

/// The compiled models, each kept loaded for the whole run, so that a
/// session's recur_model_load only reopens an already mapped library.
const std::vector<std::string> &modelPaths() {
  static const std::vector<std::string> *paths = [] {
    auto *result = new std::vector<std::string>();
    std::string list = RECUR_FUZZ_MODELS;
    for (size_t begin = 0; begin <= list.size();) {
      size_t end = std::min(list.find(':', begin), list.size());
      result->push_back(list.substr(begin, end - begin));
      begin = end + 1;
    }
    // Never freed, and reachable from here so that LeakSanitizer agrees.
    static auto *keptLoaded = new std::vector<RecurModel *>();
    for (const std::string &path : *result) {
      RecurModel *model;
      std::string message = consume(recur_model_load(path.c_str(), &model));
      if (!message.empty())
        fail("cannot load a fuzz model: " + message);
      keptLoaded->push_back(model);
    }
    return result;
  }();
  return *paths;
}

/// Where safetensors inputs are written; one file per fuzzing process.
const std::string &weightsPath() {
  static const std::string *path = [] {
    const char *directory = std::getenv("TMPDIR");
    auto *result = new std::string(
        std::string(directory && *directory ? directory : "/tmp") +
        "/recur-fuzz-runtime-" + std::to_string(getpid()) + ".safetensors");
    std::atexit([] { std::remove(weightsPath().c_str()); });
    return result;
  }();
  return *path;
}

/// One input's calls on one freshly loaded model.
class Session {
public:
  Session(RecurModel *model, Bytes &in) : model(model), in(in) {
    for (RecurTensorKind kind : {RECUR_INPUT, RECUR_WEIGHT, RECUR_OUTPUT}) {
      std::vector<Spec> &specs = specsOf(kind);
      for (size_t i = 0; i < recur_model_num_tensors(model, kind); ++i) {
        RecurTensorInfo info;
        std::string message =
            consume(recur_model_tensor_info(model, kind, i, &info));
        if (!message.empty())
          fail("tensor_info fails for a listed tensor: " + message);
        Spec spec{info.name,
                  info.dtype,
                  std::vector<int64_t>(info.shape, info.shape + info.ndim),
                  {},
                  info.index_bound};
        for (int32_t d = 0; d < info.ndim; ++d)
          spec.dims.push_back(info.dims[d]);
        specs.push_back(spec);
      }
    }
    weightBound.assign(weights.size(), false);
  }

  void step() {
    switch (in.byte() % 8) {
    case 0:
      trace("bind every weight");
      return bindAllWeights();
    case 1:
      trace("bind one weight");
      return bindOneWeight();
    case 2:
      trace("bind a weights file");
      return bindWeightsFile();
    case 3:
      trace("set threads");
      return setThreads();
    case 4:
      trace("query a tensor");
      return queryTensor();
    case 5:
      trace("set host outputs");
      return setHostOutputs();
    case 6:
    case 7:
      trace("run");
      return run();
    }
  }

private:
  std::vector<Spec> &specsOf(RecurTensorKind kind) {
    return kind == RECUR_INPUT    ? inputs
           : kind == RECUR_WEIGHT ? weights
                                  : outputs;
  }

  bool allWeightsBound() const {
    for (bool bound : weightBound)
      if (!bound)
        return false;
    return true;
  }

  /// Values for a tensor of `spec`'s dtype: token ids for an index input
  /// (in range unless `outOfRange`), otherwise raw input bytes (any float,
  /// NaN included).
  std::vector<uint8_t> valuesFor(const Spec &spec, bool outOfRange) {
    std::vector<uint8_t> pattern = in.take(in.byte() % 64);
    if (spec.indexBound <= 0 || spec.dtype.code != kDLInt)
      return pattern;
    size_t width = elementBytes(spec.dtype);
    std::vector<uint8_t> ids;
    for (size_t i = 0; i < std::max<size_t>(pattern.size(), 1); ++i) {
      int64_t id = pattern.empty() ? 0 : pattern[i] % spec.indexBound;
      uint8_t bytes[8];
      std::memcpy(bytes, &id, 8); // little-endian: the low `width` bytes
      ids.insert(ids.end(), bytes, bytes + width);
    }
    if (outOfRange) {
      // The pattern repeats over the tensor: one bad id in each repeat.
      int64_t bad = in.pick<int64_t>(
          {-1, spec.indexBound, INT64_MIN, INT64_MAX, spec.indexBound + 1000});
      uint8_t bytes[8];
      std::memcpy(bytes, &bad, 8);
      std::memcpy(ids.data(), bytes, width);
    }
    return ids;
  }

  /// A well-formed tensor of `spec` with dynamic sizes from `sizes` (T, B).
  const DLTensor *wellFormed(const Spec &spec, const int64_t sizes[2],
                             bool outOfRange, TensorArena &arena) {
    std::vector<int64_t> shape = spec.shape;
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0)
        shape[i] = sizes[spec.dims[i] == "T" ? 0 : 1];
    DLTensor *tensor = arena.newTensor();
    tensor->device = {in.byte() % 4 ? kDLCPU : kDLCUDAHost, 0};
    tensor->ndim = int32_t(shape.size());
    tensor->dtype = spec.dtype;
    tensor->shape = arena.newArray(shape);
    if (in.byte() % 4 == 0) { // compact strides, spelled out
      std::vector<int64_t> strides(shape.size());
      for (int64_t i = int64_t(shape.size()) - 1, stride = 1; i >= 0; --i) {
        strides[i] = stride;
        stride *= shape[i];
      }
      tensor->strides = arena.newArray(strides);
    }
    tensor->byte_offset =
        in.byte() % 4 == 0 ? in.byte() % 4 * elementBytes(spec.dtype) : 0;
    uint64_t bytes;
    spannedBytes(shape, spec.dtype, bytes);
    uint8_t *data = arena.newBuffer(tensor->byte_offset + bytes);
    fill(data + tensor->byte_offset, bytes, valuesFor(spec, outOfRange));
    tensor->data = data;
    return tensor;
  }

  /// A tensor with fuzzed dtype, rank, sizes, strides, offset and device,
  /// loosely based on `spec` so that some come close to well-formed.
  const DLTensor *fuzzed(const Spec *spec, TensorArena &arena) {
    DLTensor *tensor = arena.newTensor();
    DLDataType dtype = spec ? spec->dtype : DLDataType{kDLFloat, 32, 1};
    if (in.byte() % 4 == 0)
      dtype = {uint8_t(in.byte() % 8),
               in.pick<uint8_t>({8, 16, 32, 64, 1, 0, 255}),
               in.pick<uint16_t>({1, 1, 2, 0, 65535})};
    tensor->dtype = dtype;
    int32_t specRank = spec ? int32_t(spec->shape.size()) : 2;
    int32_t rank = in.pick<int32_t>(
        {specRank, specRank, specRank + 1, specRank - 1, 0, -1, 9});
    tensor->ndim = rank;
    std::vector<int64_t> shape(std::max(rank, 0));
    for (int32_t i = 0; i < rank; ++i) {
      int64_t like = spec && i < specRank && spec->shape[i] >= 0
                         ? spec->shape[i]
                         : 1 + in.byte() % kMaxSeq;
      shape[i] = in.pick<int64_t>({like, like, like + 1, 0, -1, 1LL << 32,
                                   INT64_MAX, in.integer<int64_t>()});
    }
    // The runtime reads `ndim` sizes (and strides): those arrays are valid
    // even when ndim is not.
    shape.resize(std::max<size_t>(shape.size(), 1), 1);
    tensor->shape = arena.newArray(shape);
    if (in.byte() % 4 == 0) {
      std::vector<int64_t> strides(shape.size());
      for (int64_t &stride : strides)
        stride = in.pick<int64_t>({1, 0, -1, 2, in.integer<int64_t>()});
      tensor->strides = arena.newArray(strides);
    }
    tensor->byte_offset = in.byte() % 8 == 0 ? in.byte() : 0;
    tensor->device = {
        in.pick<DLDeviceType>({kDLCPU, kDLCPU, kDLCPU, kDLCUDAHost, kDLCUDA,
                               kDLCUDAManaged, kDLOpenCL}),
        in.byte() % 4 == 0 ? int32_t(in.byte()) : 0};
    attachData(*tensor, shape, arena);
    return tensor;
  }

  /// Gives `tensor` (of `shape`, which has at least ndim sizes) data as
  /// large as its shape says, or, where that cannot be, data it must reject.
  void attachData(DLTensor &tensor, std::vector<int64_t> shape,
                  TensorArena &arena) {
    size_t rank = size_t(std::max(tensor.ndim, 0));
    uint64_t bytes;
    bool fits =
        spannedBytes(std::vector<int64_t>(shape.begin(), shape.begin() + rank),
                     tensor.dtype, bytes);
    tensor.shape = arena.newArray(shape);
    if (!fits) {
      // Must be rejected from the shape alone.
      tensor.data = in.byte() % 2 ? nullptr : arena.newBuffer(8);
    } else if (tensor.byte_offset + bytes > kMaxBufferBytes) {
      tensor.data = nullptr; // too large to give; "no data" is the answer
    } else {
      uint8_t *data = arena.newBuffer(tensor.byte_offset + bytes);
      fill(data, tensor.byte_offset + bytes, in.take(in.byte() % 16));
      tensor.data = data;
    }
  }

  /// A tensor of `spec`'s dtype and rank whose dynamic sizes are huge.
  const DLTensor *withHugeSizes(const Spec &spec, TensorArena &arena) {
    int64_t sizes[2] = {
        in.pick<int64_t>({1LL << 32, 1LL << 40, INT64_MAX, 1LL << 62, 2}),
        in.pick<int64_t>({1LL << 32, 1LL << 31, INT64_MAX, 1, 3})};
    std::vector<int64_t> shape = spec.shape;
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0)
        shape[i] = sizes[spec.dims[i] == "T" ? 0 : 1];
    DLTensor *tensor = arena.newTensor();
    tensor->device = {kDLCPU, 0};
    tensor->ndim = int32_t(shape.size());
    tensor->dtype = spec.dtype;
    shape.resize(std::max<size_t>(shape.size(), 1), 1);
    attachData(*tensor, shape, arena);
    return tensor;
  }

  /// Whether a successful bind or run could have taken `tensor` for `spec`
  /// (dynamic sizes aside).
  static bool conforms(const Spec &spec, const DLTensor &tensor) {
    if (!sameDtype(spec.dtype, tensor.dtype) ||
        tensor.ndim != int32_t(spec.shape.size()))
      return false;
    for (int32_t i = 0; i < tensor.ndim; ++i)
      if (spec.shape[i] >= 0 ? tensor.shape[i] != spec.shape[i]
                             : tensor.shape[i] < 1)
        return false;
    return true;
  }

  void bindAllWeights() {
    TensorArena arena;
    int64_t noSizes[2] = {1, 1};
    for (size_t i = 0; i < weights.size(); ++i) {
      const DLTensor *tensor = wellFormed(weights[i], noSizes, false, arena);
      std::string message = consume(
          recur_model_bind_weight(model, weights[i].name.c_str(), tensor));
      if (!message.empty())
        fail("a well-formed weight is rejected: " + message);
      weightBound[i] = true;
    }
  }

  void bindOneWeight() {
    TensorArena arena;
    uint8_t choice = in.byte();
    // Mostly a weight of the model, else a fuzzed name or none.
    std::string name;
    if (choice % 4) {
      name = weights[choice % weights.size()].name;
    } else {
      std::vector<uint8_t> bytes = in.take(in.byte() % 24);
      name.assign(bytes.begin(), bytes.end());
    }
    const char *namePointer = choice % 16 == 0 ? nullptr : name.c_str();
    size_t index = 0;
    while (namePointer && index < weights.size() &&
           weights[index].name != namePointer)
      ++index;
    if (!namePointer)
      index = weights.size();
    const Spec *spec = index < weights.size() ? &weights[index] : nullptr;
    const DLTensor *tensor = in.byte() % 16 ? fuzzed(spec, arena) : nullptr;
    std::string message =
        consume(recur_model_bind_weight(model, namePointer, tensor));
    if (!message.empty())
      return;
    if (!spec || !tensor || !conforms(*spec, *tensor))
      fail("recur_model_bind_weight accepted a tensor that does not match "
           "weight '" +
           name + "'");
    weightBound[index] = true;
  }

  /// The model's weights in a safetensors file, possibly damaged; or the
  /// input's raw bytes.
  std::vector<uint8_t> weightsFile(bool &wellFormedFile, bool &hasExtra) {
    wellFormedFile = false;
    hasExtra = false;
    if (in.byte() % 4 == 0)
      return in.take(in.integer<uint16_t>() % 4096);
    recur::safetensors::Writer writer;
    std::string error;
    bool damaged = false;
    for (const Spec &spec : weights) {
      std::string dtype = safetensorsDtype(spec.dtype);
      std::vector<int64_t> shape = spec.shape;
      switch (in.byte() % 16) {
      case 0:
        damaged = true;
        continue; // missing
      case 1:
        damaged = true;
        dtype = in.pick<const char *>({"F64", "F16", "BF16", "I64", "U8"});
        break;
      case 2:
        damaged = true;
        if (shape.empty() || in.byte() % 2)
          shape.push_back(1 + in.byte() % 3);
        else
          shape.back() += in.byte() % 2 ? 1 : -1;
        break;
      }
      uint64_t count;
      spannedBytes(shape, DLDataType{kDLUInt, 8, 1}, count);
      std::vector<uint8_t> data(count * recur::safetensors::dtypeSize(dtype));
      fill(data.data(), data.size(), in.take(in.byte() % 32));
      if (!writer.add(spec.name, dtype, shape, data.data(), data.size(), error))
        fail("the safetensors writer refuses a weight: " + error);
    }
    if (in.byte() % 4 == 0) {
      hasExtra = true;
      std::vector<uint8_t> extra = in.take(in.byte() % 16);
      writer.add("extra." + std::to_string(in.byte()), "U8",
                 {int64_t(extra.size())}, extra.data(), extra.size(), error);
    }
    std::vector<uint8_t> file = writer.toBytes();
    if (!file.empty() && in.byte() % 4 == 0) {
      damaged = true;
      switch (in.byte() % 3) {
      case 0:
        file.resize(in.integer<uint16_t>() % file.size());
        break;
      case 1:
        file[in.integer<uint16_t>() % file.size()] ^= 1 + in.byte() % 255;
        break;
      case 2:
        for (int i = 0; i < 8; ++i) // the header length
          file[i] = in.byte();
        break;
      }
    }
    wellFormedFile = !damaged;
    return file;
  }

  void bindWeightsFile() {
    switch (in.byte() % 16) {
    case 0:
      consume(recur_model_bind_weights_file(model, nullptr));
      return;
    case 1:
      consume(recur_model_bind_weights_file(model, "/"));
      return;
    case 2:
      consume(recur_model_bind_weights_file(model, "/nonexistent/w"));
      return;
    }
    bool wellFormedFile, hasExtra;
    std::vector<uint8_t> file = weightsFile(wellFormedFile, hasExtra);
    std::FILE *stream = std::fopen(weightsPath().c_str(), "wb");
    if (!stream ||
        std::fwrite(file.data(), 1, file.size(), stream) != file.size() ||
        std::fclose(stream) != 0)
      fail("cannot write " + weightsPath());
    // Strict binding refuses a tensor the model does not take; non-strict
    // binding ignores it.
    bool strict = in.byte() % 2;
    std::string message = consume(recur_model_bind_weights_file_mode(
        model, weightsPath().c_str(),
        strict ? RECUR_BIND_STRICT : RECUR_BIND_NON_STRICT));
    if (message.empty() && strict && hasExtra)
      fail("strict binding accepts a file with an unexpected tensor");
    // A non-strict bind of a damaged file may have bound only some weights:
    // which is not known here, so none is counted.
    if (message.empty() && (strict || wellFormedFile))
      weightBound.assign(weights.size(), true);
    else if (!message.empty() && wellFormedFile && !(strict && hasExtra))
      fail("a well-formed weights file is rejected: " + message);
  }

  void setThreads() {
    int threads =
        in.pick<int>({1, 2, 0, -1, INT_MIN, INT_MAX, in.integer<int>()});
    std::string message = consume(recur_model_set_threads(model, threads));
    // libomp aborts the process when it cannot make the threads.
    if (message.empty() != (threads >= 1 && threads <= 1024))
      fail("recur_model_set_threads(" + std::to_string(threads) +
           ") answers '" + message + "'");
    if (threads > kMaxRunThreads)
      consume(recur_model_set_threads(model, 1));
  }

  void setHostOutputs() {
    consume(recur_model_set_host_outputs(model, in.integer<int>()));
    if (std::strcmp(recur_model_device(model), "cpu") != 0)
      fail("a CPU model names another device");
  }

  void queryTensor() {
    // 3 is no kind; values outside the enum's range would be undefined in
    // C++ before they reach the runtime.
    auto kind = RecurTensorKind(in.byte() % 4);
    size_t index = in.byte() % 4 == 0 ? in.integer<size_t>() : in.byte() % 8;
    bool nullInfo = in.byte() % 8 == 0;
    RecurTensorInfo info;
    std::string message = consume(recur_model_tensor_info(
        model, kind, index, nullInfo ? nullptr : &info));
    bool exists = kind <= RECUR_OUTPUT &&
                  index < recur_model_num_tensors(model, kind) && !nullInfo;
    if (message.empty() != exists)
      fail("recur_model_tensor_info answers '" + message + "' for kind " +
           std::to_string(kind) + ", index " + std::to_string(index));
    if (!exists)
      return;
    if (!info.name || info.ndim < 0 || info.ndim > 8 ||
        (info.ndim && (!info.shape || !info.dims)))
      fail("recur_model_tensor_info gives a malformed description");
    size_t length = std::strlen(info.name);
    for (int32_t i = 0; i < info.ndim; ++i)
      length += std::strlen(info.dims[i]) + size_t(info.shape[i]);
    volatile size_t sink = length + std::strlen(recur_model_description(model));
    (void)sink;
  }

  void run() {
    TensorArena arena;
    // T and B shared by the well-formed inputs; sometimes one input disagrees.
    int64_t sizes[2] = {1 + in.byte() % kMaxSeq, 1 + in.byte() % kMaxBatch};
    bool wellFormedRun = allWeightsBound();
    size_t count = inputs.size();
    if (in.byte() % 8 == 0) {
      count = in.byte() % (inputs.size() + 2);
      wellFormedRun &= count == inputs.size();
    }
    std::vector<const DLTensor *> tensors(std::max(count, inputs.size()));
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Spec &spec = inputs[std::min(i, inputs.size() - 1)];
      switch (in.byte() % 8) {
      default:
        tensors[i] = wellFormed(spec, sizes, false, arena);
        break;
      case 4:
        tensors[i] = withHugeSizes(spec, arena);
        wellFormedRun = false;
        break;
      case 5: {
        bool outOfRange = spec.indexBound > 0;
        tensors[i] = wellFormed(spec, sizes, outOfRange, arena);
        wellFormedRun &= !outOfRange;
        break;
      }
      case 6: {
        int64_t other[2] = {1 + in.byte() % kMaxSeq, 1 + in.byte() % kMaxBatch};
        tensors[i] = wellFormed(spec, other, false, arena);
        wellFormedRun = false; // unless the sizes happen to agree; unchecked
        break;
      }
      case 7:
        tensors[i] = in.byte() % 8 ? fuzzed(&spec, arena) : nullptr;
        wellFormedRun = false;
        break;
      }
    }
    size_t outputCount = outputs.size();
    if (in.byte() % 8 == 0) {
      outputCount = in.byte() % (outputs.size() + 2);
      wellFormedRun &= outputCount == outputs.size();
    }
    std::vector<DLManagedTensor *> results(
        std::max(outputCount, outputs.size()), nullptr);
    bool nullInputs = count && in.byte() % 16 == 0;
    bool nullOutputs = in.byte() % 16 == 0;
    wellFormedRun &= !nullInputs && !nullOutputs;

    std::string message = consume(
        recur_model_run(model, nullInputs ? nullptr : tensors.data(), count,
                        nullOutputs ? nullptr : results.data(), outputCount));
    if (!message.empty()) {
      if (wellFormedRun)
        fail("a well-formed run fails: " + message);
      for (DLManagedTensor *result : results)
        if (result)
          fail("a failed run handed out an output");
      return;
    }
    for (size_t i = 0; i < outputs.size(); ++i)
      checkOutput(outputs[i], results[i]);
  }

  /// Reads every element of an output, so that ASan checks its buffer against
  /// its shape, and frees it.
  void checkOutput(const Spec &spec, DLManagedTensor *result) {
    if (!result || !result->deleter)
      fail("output '" + spec.name + "' is missing or has no deleter");
    const DLTensor &tensor = result->dl_tensor;
    if (!conforms(spec, tensor) || tensor.device.device_type != kDLCPU)
      fail("output '" + spec.name + "' does not match its description");
    uint64_t bytes;
    if (!spannedBytes(
            std::vector<int64_t>(tensor.shape, tensor.shape + tensor.ndim),
            tensor.dtype, bytes) ||
        bytes > kMaxBufferBytes * 16)
      fail("output '" + spec.name + "' is implausibly large");
    if (bytes && !tensor.data)
      fail("output '" + spec.name + "' has no data");
    const uint8_t *data =
        static_cast<const uint8_t *>(tensor.data) + tensor.byte_offset;
    unsigned sum = 0;
    for (uint64_t i = 0; i < bytes; ++i)
      sum += data[i];
    volatile unsigned sink = sum;
    (void)sink;
    result->deleter(result);
  }

  RecurModel *model;
  Bytes &in;
  std::vector<Spec> inputs, weights, outputs;
  std::vector<bool> weightBound;
};

/// Calls every entry point with a null model once: each must answer, not
/// crash.
void callWithNullModel() {
  RecurTensorInfo info;
  DLManagedTensor *output = nullptr;
  consume(recur_model_load(nullptr, nullptr));
  RecurModel *model;
  consume(recur_model_load(nullptr, &model));
  recur_model_free(nullptr);
  volatile size_t sink = std::strlen(recur_model_description(nullptr)) +
                         std::strlen(recur_model_device(nullptr)) +
                         recur_model_num_tensors(nullptr, RECUR_INPUT);
  (void)sink;
  consume(recur_model_tensor_info(nullptr, RECUR_INPUT, 0, &info));
  consume(recur_model_bind_weight(nullptr, "w", nullptr));
  consume(recur_model_bind_weights_file(nullptr, "w"));
  consume(recur_model_set_threads(nullptr, 1));
  consume(recur_model_set_host_outputs(nullptr, 1));
  consume(recur_model_run(nullptr, nullptr, 0, &output, 1));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::vector<std::string> &paths = modelPaths();
  Bytes in(data, size);
  uint8_t first = in.byte();
  if (first == 0xff) {
    callWithNullModel();
    return 0;
  }
  RecurModel *model;
  std::string message =
      consume(recur_model_load(paths[first % paths.size()].c_str(), &model));
  if (!message.empty())
    fail("cannot reload a fuzz model: " + message);
  Session session(model, in);
  for (int step = 0; step < kMaxSteps && !in.empty(); ++step)
    session.step();
  recur_model_free(model);
  return 0;
}
