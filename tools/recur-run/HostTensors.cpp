//===- HostTensors.cpp - recur-run's tensors on the host ------------------===//

#include "HostTensors.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace recur::run;
using recur::elementBytes;

/// Element `i` of an f32 or bf16 buffer.
float recur::run::floatAt(const void *data, DLDataType dtype, size_t i) {
  if (isBf16(dtype))
    return recur::bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  return static_cast<const float *>(data)[i];
}

std::string recur::run::safetensorsName(DLDataType t) {
  const recur::Dtype *dtype = recur::findDtype(t);
  return dtype ? dtype->safetensors : recur::describeDtype(t);
}

/// Random values: weights uniform in [-k, k] with k = 1/sqrt(last dim) (0.1
/// for vectors), float inputs uniform in [-1, 1], index inputs uniform in
/// [0, bound).
void recur::run::fillRandom(HostTensor &tensor, std::mt19937_64 &rng,
                            bool isWeight) {
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

ref::Value recur::run::toReference(const HostTensor &tensor) {
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

HostTensor recur::run::makeTensor(const RecurTensorInfo &info) {
  HostTensor tensor;
  tensor.name = info.name;
  tensor.info = info;
  tensor.shape.assign(info.shape, info.shape + info.ndim);
  return tensor;
}

/// Bytes of a (valid, contiguous) tensor the runtime returned.
size_t recur::run::byteSize(const DLTensor &tensor) {
  size_t count = 1;
  for (int d = 0; d < tensor.ndim; ++d)
    count *= static_cast<size_t>(tensor.shape[d]);
  return count * elementBytes(tensor.dtype);
}

std::string recur::run::formatFloat(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

/// The model's current value of each weight in `bound` (as bound, or as the
/// last training step left it).
std::vector<HostTensor>
recur::run::readWeights(RecurModel *model,
                        const std::vector<HostTensor> &bound) {
  std::vector<HostTensor> current = bound;
  for (HostTensor &weight : current) {
    DLTensor view = weight.view();
    check(recur_model_read_weight(model, weight.name.c_str(), &view));
  }
  return current;
}

const HostTensor &recur::run::findTensor(const std::vector<HostTensor> &tensors,
                                         const std::string &name) {
  for (const HostTensor &tensor : tensors)
    if (tensor.name == name)
      return tensor;
  die("--check: the model has no tensor '" + name + "'");
}

void recur::run::fillRandomLengths(HostTensor &tensor, std::mt19937_64 &rng,
                                   int64_t steps) {
  if (!isI64(tensor.info.dtype) || tensor.shape.size() != 1)
    die("input '" + tensor.name +
        "' holds sequence lengths: recur-run makes "
        "them as an i64 [B] tensor, got shape " +
        ref::formatShape(tensor.shape));
  int64_t rows = tensor.shape[0];
  std::vector<int64_t> lengths(rows);
  std::uniform_int_distribution<int64_t> pick(1, steps);
  for (int64_t &length : lengths)
    length = pick(rng);
  if (rows > 0)
    lengths.front() = steps;
  if (rows > 1)
    lengths.back() = 1;
  tensor.bytes.resize(rows * sizeof(int64_t));
  std::memcpy(tensor.bytes.data(), lengths.data(), tensor.bytes.size());
}
