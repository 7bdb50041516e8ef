//===- TensorChecks.cpp - tensors handed to the runtime vs. their specs ---===//

#include "TensorChecks.h"

#include "Dtypes.h"
#include "Shapes.h"

#include <cstring>
#include <vector>

using namespace recur::runtime;
using recur::formatShape;

int64_t recur::runtime::numElements(const std::vector<int64_t> &shape,
                                    const std::string &what) {
  int64_t count;
  if (!checkedElementCount(shape, count))
    throw Failure(what + " has shape " + formatShape(shape) +
                  ", whose element count does not fit in 64 bits");
  return count;
}

size_t recur::runtime::byteCount(const std::vector<int64_t> &shape,
                                 DLDataType dtype, const std::string &what) {
  numElements(shape, what);
  int64_t bytes;
  if (!checkedByteCount(shape, static_cast<int64_t>(elementBytes(dtype)),
                        bytes))
    throw Failure(what + " has shape " + formatShape(shape) +
                  ", whose size in bytes does not fit in 64 bits");
  return static_cast<size_t>(bytes);
}

std::vector<int64_t> recur::runtime::shapeOf(const DLTensor &tensor) {
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.ndim);
}

const void *recur::runtime::dataOf(const DLTensor &tensor) {
  return static_cast<const char *>(tensor.data) + tensor.byte_offset;
}

bool recur::runtime::isHostMemory(const DLTensor &tensor) {
  return tensor.device.device_type == kDLCPU ||
         tensor.device.device_type == kDLCUDAHost;
}

std::string recur::runtime::deviceTypeName(int type) {
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

size_t recur::runtime::checkTensor(const std::string &what,
                                   const TensorSpec &spec,
                                   const DLTensor *tensor, int64_t sizes[2],
                                   const Backend &backend) {
  if (!tensor)
    throw Failure(what + " is null");
  backend.checkDevice(what, *tensor);
  if (!sameDtype(tensor->dtype, spec.dtype))
    throw Failure(what + " has dtype " + describeDtype(tensor->dtype) +
                  ", expected " + spec.dtypeName);
  if (tensor->ndim < 0 || (tensor->ndim > 0 && !tensor->shape))
    throw Failure(what + " has no valid shape (ndim " +
                  std::to_string(tensor->ndim) + ")");
  std::vector<int64_t> shape = shapeOf(*tensor);
  bool matches = shape.size() == spec.shape.size();
  for (size_t i = 0; matches && i < shape.size(); ++i)
    matches = spec.shape[i] < 0 ? shape[i] >= 0 : shape[i] == spec.shape[i];
  if (!matches)
    throw Failure(what + " has shape " + formatShape(shape) + ", expected " +
                  spec.formattedShape());
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
  // Generated code loads whole elements and may assume their alignment.
  size_t alignment = elementBytes(tensor->dtype);
  if (alignment && reinterpret_cast<uintptr_t>(dataOf(*tensor)) % alignment)
    throw Failure(what + " has data at an address not aligned to its " +
                  std::to_string(alignment) + "-byte elements (byte_offset " +
                  std::to_string(tensor->byte_offset) + ")");
  return bytes;
}

/// The values of an integer (i32 or i64) tensor, read to the host.
static std::vector<int64_t> integersOf(const std::string &what,
                                       const TensorSpec &spec,
                                       const DLTensor &tensor, size_t bytes,
                                       const Backend &backend) {
  const void *data = dataOf(tensor);
  std::vector<char> hostCopy;
  if (!isHostMemory(tensor)) {
    hostCopy.resize(bytes);
    backend.readToHost(tensor, data, bytes, hostCopy.data());
    data = hostCopy.data();
  }
  int64_t count = numElements(shapeOf(tensor), what);
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) {
    if (spec.dtype.bits == 64) {
      std::memcpy(&values[i], static_cast<const char *>(data) + 8 * i, 8);
    } else {
      int32_t narrow;
      std::memcpy(&narrow, static_cast<const char *>(data) + 4 * i, 4);
      values[i] = narrow;
    }
  }
  return values;
}

void recur::runtime::checkIndices(const std::string &what,
                                  const TensorSpec &spec,
                                  const DLTensor &tensor, size_t bytes,
                                  const Backend &backend) {
  if (spec.indexBound <= 0 || spec.dtype.code != kDLInt)
    return;
  std::vector<int64_t> values = integersOf(what, spec, tensor, bytes, backend);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < 0 || values[i] >= spec.indexBound)
      throw Failure(what + " holds " + std::to_string(values[i]) +
                    " at flat index " + std::to_string(i) +
                    "; values must lie in [0, " +
                    std::to_string(spec.indexBound) + ")");
}

void recur::runtime::checkSequenceLengths(const std::string &what,
                                          const TensorSpec &spec,
                                          const DLTensor &tensor, size_t bytes,
                                          int64_t steps,
                                          const Backend &backend) {
  if (!spec.sequenceLengths || spec.dtype.code != kDLInt)
    return;
  if (spec.lengthsSteps >= 0)
    steps = spec.lengthsSteps;
  std::vector<int64_t> values = integersOf(what, spec, tensor, bytes, backend);
  for (size_t row = 0; row < values.size(); ++row)
    if (values[row] < 1 || values[row] > steps)
      throw Failure(what + " holds " + std::to_string(values[row]) +
                    " for row " + std::to_string(row) +
                    "; each row's length must lie in [1, T] = [1, " +
                    std::to_string(steps) + "]");
}
