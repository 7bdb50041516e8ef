//===- Shapes.cpp - shapes in messages, sizes without overflow ------------===//

#include "Shapes.h"

std::string recur::formatShape(const std::vector<int64_t> &shape) {
  return formatShape(shape, {});
}

std::string recur::formatShape(const std::vector<int64_t> &shape,
                               const std::vector<std::string> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += i ? ", " : "";
    text += shape[i] < 0 && i < dims.size() ? dims[i] : std::to_string(shape[i]);
  }
  return text + "]";
}

bool recur::checkedElementCount(const std::vector<int64_t> &shape,
                                int64_t &count) {
  count = 1;
  for (int64_t size : shape)
    if (size < 0 || __builtin_mul_overflow(count, size, &count))
      return false;
  return true;
}

bool recur::checkedByteCount(const std::vector<int64_t> &shape,
                             int64_t elementBytes, int64_t &bytes) {
  int64_t count;
  return checkedElementCount(shape, count) &&
         !__builtin_mul_overflow(count, elementBytes, &bytes);
}
