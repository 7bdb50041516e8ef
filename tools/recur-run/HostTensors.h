//===- HostTensors.h - recur-run's tensors on the host ----------*- C++ -*-===//
//
// The weights and inputs recur-run binds, in the model's dtypes, and what
// it reads of the runtime's outputs.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TOOLS_RECUR_RUN_HOSTTENSORS_H
#define RECUR_TOOLS_RECUR_RUN_HOSTTENSORS_H

#include "Options.h"

#include "Dtypes.h"
#include "Shapes.h"
#include "reference/Interpreter.h"

#include <dlpack/dlpack.h>

#include <random>
#include <string>
#include <vector>

namespace recur::run {

namespace ref = recur::reference;

/// A host tensor owned by recur-run, in the model's dtype.
struct HostTensor {
  std::string name;
  RecurTensorInfo info{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  DLTensor view() {
    DLTensor tensor{};
    tensor.data = bytes.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = info.dtype;
    tensor.shape = shape.data();
    return tensor;
  }
  int64_t count() const {
    int64_t n;
    if (!recur::checkedElementCount(shape, n))
      die("tensor '" + name + "' has shape " + ref::formatShape(shape) +
          ", whose element count does not fit in 64 bits");
    return n;
  }
};

using recur::isBf16;
using recur::isF32;
inline bool isI64(DLDataType t) { return t.code == kDLInt && t.bits == 64; }
inline bool isFloat(DLDataType t) { return isF32(t) || isBf16(t); }

/// Element `i` of an f32 or bf16 buffer.
float floatAt(const void *data, DLDataType dtype, size_t i);

/// The dtype as safetensors names it ("F32", "BF16", "I64").
std::string safetensorsName(DLDataType t);

/// Random values: weights uniform in [-k, k] with k = 1/sqrt(last dim) (0.1
/// for vectors), float inputs uniform in [-1, 1], index inputs uniform in
/// [0, bound).
void fillRandom(HostTensor &tensor, std::mt19937_64 &rng, bool isWeight);

/// Random sequence lengths in [1, `steps`] for an i64 [B] tensor: the first
/// row's is `steps` and the last row's 1 (B >= 2), so that a batch has both
/// ends, the others uniform.
void fillRandomLengths(HostTensor &tensor, std::mt19937_64 &rng, int64_t steps);

/// The tensor as the reference takes it (f32 and bf16 as floats, i64 as
/// ids); dies on other dtypes.
ref::Value toReference(const HostTensor &tensor);

/// An empty tensor of `info`'s name, dtype and shape (-1 where dynamic).
HostTensor makeTensor(const RecurTensorInfo &info);

/// Bytes of a (valid, contiguous) tensor the runtime returned.
size_t byteSize(const DLTensor &tensor);

/// `value` in %.6g.
std::string formatFloat(double value);

/// The model's current value of each weight in `bound` (as bound, or as the
/// last training step left it).
std::vector<HostTensor> readWeights(RecurModel *model,
                                    const std::vector<HostTensor> &bound);

/// The tensor named `name`; dies if there is none.
const HostTensor &findTensor(const std::vector<HostTensor> &tensors,
                             const std::string &name);

} // namespace recur::run

#endif // RECUR_TOOLS_RECUR_RUN_HOSTTENSORS_H
