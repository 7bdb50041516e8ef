//===- MemrefAbi.cpp - MLIR memref descriptors at the model boundary ------===//

#include "MemrefAbi.h"

#include <set>

using namespace recur::runtime;

std::vector<int64_t>
recur::runtime::descriptor(const void *data,
                           const std::vector<int64_t> &shape) {
  std::vector<int64_t> words(3 + 2 * shape.size());
  words[0] = reinterpret_cast<int64_t>(data);
  words[1] = reinterpret_cast<int64_t>(data);
  words[2] = 0;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    words[3 + i] = shape[i];
    words[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return words;
}

ResultDescriptors::ResultDescriptors(const std::vector<size_t> &ranks)
    : ranks(ranks) {
  size_t total = 0;
  for (size_t rank : ranks) {
    starts.push_back(total);
    total += 3 + 2 * rank;
  }
  words.assign(total, 0);
}

void *ResultDescriptors::allocated(size_t index) const {
  return reinterpret_cast<void *>((*this)[index][0]);
}

void *ResultDescriptors::data(size_t index, size_t elementBytes) const {
  const int64_t *words = (*this)[index];
  return reinterpret_cast<char *>(words[1]) + words[2] * elementBytes;
}

std::vector<int64_t> ResultDescriptors::shape(size_t index) const {
  const int64_t *words = (*this)[index];
  return std::vector<int64_t>(words + 3, words + 3 + ranks[index]);
}

std::vector<bool> ResultDescriptors::owned(
    const std::vector<std::vector<int64_t>> &arguments) const {
  std::set<int64_t> taken;
  for (const std::vector<int64_t> &argument : arguments)
    taken.insert(argument[0]);
  std::vector<bool> result;
  for (size_t i = 0; i < size(); ++i)
    result.push_back((*this)[i][0] != 0 && taken.insert((*this)[i][0]).second);
  return result;
}
