//===- Shapes.h - shapes in messages, sizes without overflow ----*- C++ -*-===//
//
// Shared by the runtime, the reference, recur-run and the bench baselines:
// plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_COMMON_SHAPES_H
#define RECUR_COMMON_SHAPES_H

#include <cstdint>
#include <string>
#include <vector>

namespace recur {

/// "[50, 128, 10001]".
std::string formatShape(const std::vector<int64_t> &shape);

/// "[T, B, 10001]": dynamic sizes (negative) shown by their symbol in `dims`.
std::string formatShape(const std::vector<int64_t> &shape,
                        const std::vector<std::string> &dims);

/// The element count of `shape` in `count`; false when a size is negative or
/// the count does not fit in 64 bits.
bool checkedElementCount(const std::vector<int64_t> &shape, int64_t &count);

/// The byte size of `shape` with `elementBytes` per element in `bytes`; false
/// as for checkedElementCount, or when the bytes do not fit in 64 bits.
bool checkedByteCount(const std::vector<int64_t> &shape, int64_t elementBytes,
                      int64_t &bytes);

} // namespace recur

#endif // RECUR_COMMON_SHAPES_H
