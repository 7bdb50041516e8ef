//===- Dtypes.cpp - the element types models exchange, in every spelling -===//

#include "Dtypes.h"

#include <cmath>
#include <cstring>

namespace {
// A table, aligned by column.
// clang-format off
const recur::Dtype kDtypes[] = {
    {"f32", "F32", {kDLFloat, 32, 1}},  {"f64", "F64", {kDLFloat, 64, 1}},
    {"f16", "F16", {kDLFloat, 16, 1}},  {"bf16", "BF16", {kDLBfloat, 16, 1}},
    {"i64", "I64", {kDLInt, 64, 1}},    {"i32", "I32", {kDLInt, 32, 1}},
};
// clang-format on
} // namespace

const recur::Dtype *recur::findDtypeByName(const std::string &name) {
  for (const Dtype &dtype : kDtypes)
    if (name == dtype.name)
      return &dtype;
  return nullptr;
}

const recur::Dtype *recur::findDtype(DLDataType type) {
  for (const Dtype &dtype : kDtypes)
    if (sameDtype(type, dtype.dlpack))
      return &dtype;
  return nullptr;
}

std::string recur::describeDtype(DLDataType dtype) {
  if (const Dtype *known = findDtype(dtype))
    return known->name;
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

size_t recur::elementBytes(DLDataType dtype) {
  return (size_t(dtype.bits) * dtype.lanes + 7) / 8;
}

bool recur::sameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

bool recur::isF32(DLDataType dtype) {
  return sameDtype(dtype, {kDLFloat, 32, 1});
}

bool recur::isBf16(DLDataType dtype) {
  return sameDtype(dtype, {kDLBfloat, 16, 1});
}

float recur::bf16ToFloat(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

uint16_t recur::floatToBf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  if (std::isnan(value))
    return uint16_t((word >> 16) | 0x40); // quiet
  uint32_t roundingBias = 0x7fff + ((word >> 16) & 1);
  return uint16_t((word + roundingBias) >> 16);
}

std::vector<uint8_t> recur::floatsToBf16Bytes(const void *data, size_t count) {
  std::vector<uint8_t> bytes(count * sizeof(uint16_t));
  for (size_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, static_cast<const char *>(data) + i * sizeof(float),
                sizeof(float));
    uint16_t bits = floatToBf16(value);
    std::memcpy(bytes.data() + i * sizeof(uint16_t), &bits, sizeof(bits));
  }
  return bytes;
}

double recur::checkTolerance(DLDataType dtype, const std::string &precision) {
  if (isBf16(dtype) || precision == "bf16")
    return 0x1p-7;
  if (precision == "tf32")
    return 0x1p-9;
  return 1e-4;
}
