//===- TensorChecks.h - tensors handed to the runtime vs. their specs -*- C++
//-*-===//

#ifndef RECUR_RUNTIME_TENSORCHECKS_H
#define RECUR_RUNTIME_TENSORCHECKS_H

#include "Backend.h"
#include "Description.h"

#include <dlpack/dlpack.h>

namespace recur::runtime {

/// The elements of `shape`, or Failure naming `what` when the count (or the
/// bytes, with `dtype`) does not fit in 64 bits: no shape may make a small
/// buffer look large.
int64_t numElements(const std::vector<int64_t> &shape, const std::string &what);
size_t byteCount(const std::vector<int64_t> &shape, DLDataType dtype,
                 const std::string &what);

/// The tensor's shape as a vector.
std::vector<int64_t> shapeOf(const DLTensor &tensor);
/// Where its elements start (data + byte_offset).
const void *dataOf(const DLTensor &tensor);

bool isHostMemory(const DLTensor &tensor);
std::string deviceTypeName(int type);

/// Checks `tensor` (named `what`) against `spec`: memory (through the
/// backend), dtype, shape, contiguity, size. `sizes` holds the T (0) and B
/// (1) seen so far (-1 if unset) and learns new ones. Returns its bytes.
size_t checkTensor(const std::string &what, const TensorSpec &spec,
                   const DLTensor *tensor, int64_t sizes[2],
                   const Backend &backend);

/// An index outside the table would make the kernel read out of bounds, so
/// index inputs are checked wherever they live (device ones through a copy).
void checkIndices(const std::string &what, const TensorSpec &spec,
                  const DLTensor &tensor, size_t bytes, const Backend &backend);

/// A sequence length outside [1, T] (the spec's static T, or `steps`, the
/// run's) would run a row past its input or not at all: lengths inputs are
/// checked as indices are.
void checkSequenceLengths(const std::string &what, const TensorSpec &spec,
                          const DLTensor &tensor, size_t bytes, int64_t steps,
                          const Backend &backend);

} // namespace recur::runtime

#endif // RECUR_RUNTIME_TENSORCHECKS_H
