//===- Dtypes.h - the element types models exchange -------------*- C++ -*-===//
//-*-===//
//
// One table: the description's name ("f32"), the safetensors name ("F32")
// and the DLPack type of every dtype the runtime exchanges.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_COMMON_DTYPES_H
#define RECUR_COMMON_DTYPES_H

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace recur {

struct Dtype {
  const char *name;        // in model descriptions: "f32"
  const char *safetensors; // in safetensors headers: "F32"
  DLDataType dlpack;
};

/// nullptr for a dtype models do not exchange.
const Dtype *findDtypeByName(const std::string &name);
const Dtype *findDtype(DLDataType dtype);

/// "f32", or a spelling of a DLPack type outside the table ("u8", "f32x4").
std::string describeDtype(DLDataType dtype);

size_t elementBytes(DLDataType dtype);

bool sameDtype(DLDataType a, DLDataType b);

bool isF32(DLDataType dtype);
bool isBf16(DLDataType dtype);

/// bf16 is the upper half of an f32: widening is exact; narrowing rounds to
/// nearest, ties to even (as PyTorch's `.bfloat16()`), and keeps NaN a NaN.
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

} // namespace recur

#endif // RECUR_COMMON_DTYPES_H
