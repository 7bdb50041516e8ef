//===- MemrefAbi.h - MLIR memref descriptors at the model boundary -*- C++ -*-===//
//
// A compiled model's run function takes `void **args`: args[0] points to the
// result descriptors, args[1..] to one descriptor per argument, where a
// descriptor is MLIR's for a rank-R memref:
//   {void *allocated, void *aligned, int64_t offset, int64_t sizes[R],
//    int64_t strides[R]}
// Results are allocated by the model; ownership passes to the caller.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_MEMREFABI_H
#define RECUR_RUNTIME_MEMREFABI_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace recur::runtime {

/// The descriptor of a dense row-major buffer at `data` with `shape`.
std::vector<int64_t> descriptor(const void *data,
                                const std::vector<int64_t> &shape);

/// Room for the model to write the descriptors of results of these ranks.
class ResultDescriptors {
public:
  explicit ResultDescriptors(const std::vector<size_t> &ranks);
  void *storage() { return words.data(); }
  size_t size() const { return starts.size(); }
  const int64_t *operator[](size_t index) const {
    return words.data() + starts[index];
  }
  void *allocated(size_t index) const;
  /// Where result `index`'s elements start, for `elementBytes` each.
  void *data(size_t index, size_t elementBytes) const;
  std::vector<int64_t> shape(size_t index) const;

  /// Which result buffers outputs may take over. A model may return an
  /// input or a weight, or one buffer as two results (a value returned twice,
  /// results that CSE merged); those outputs get a copy instead, so that
  /// every output owns exactly one allocation and nothing is freed twice or
  /// freed from under the runtime.
  std::vector<bool>
  owned(const std::vector<std::vector<int64_t>> &arguments) const;

private:
  std::vector<int64_t> words;
  std::vector<size_t> starts, ranks;
};

} // namespace recur::runtime

#endif // RECUR_RUNTIME_MEMREFABI_H
