//===- Dtypes.h - the element types models exchange -------------*- C++ -*-===//
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
#include <vector>

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
/// `count` f32 values at `data` (any alignment: a safetensors payload)
/// rounded to bf16, as the bytes of a bf16 tensor.
std::vector<uint8_t> floatsToBf16Bytes(const void *data, size_t count);

/// The default tolerance t of a check |got - want| <= t (1 + |want|) of an
/// output of `dtype` against the reference, from a model whose GEMMs
/// multiply in `precision` (a description's "precision": "fp32", "tf32",
/// "bf16"): a few f32 rounding errors (1e-4); twice bf16's unit roundoff
/// (2^-7) for a bf16 output or bf16 products, since one rounding may take
/// up one alone; four times tf32's (2^-9), since both operands of each
/// product are rounded.
double checkTolerance(DLDataType dtype, const std::string &precision);

} // namespace recur

#endif // RECUR_COMMON_DTYPES_H
