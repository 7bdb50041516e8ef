//===- Reference.cpp - Plain C++ reference of the recur ops ---------------===//

#include "reference/Reference.h"
#include "reference/LstmCell.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace recur::reference {

template <typename T>
Tensor<T>::Tensor(std::vector<int64_t> shape, std::vector<T> data)
    : shape(std::move(shape)), data(std::move(data)) {
  if (static_cast<int64_t>(this->data.size()) != numElements())
    throw std::invalid_argument("tensor of shape " + formatShape(this->shape) +
                                " needs " + std::to_string(numElements()) +
                                " elements, got " +
                                std::to_string(this->data.size()));
}

template <typename T>
Tensor<T>::Tensor(std::vector<int64_t> shape)
    : shape(std::move(shape)), data(numElements(), T()) {}

template <typename T> int64_t Tensor<T>::numElements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

template struct Tensor<float>;
template struct Tensor<double>;
template struct Tensor<int64_t>;

template <typename T>
void expectShape(const std::string &name, const Tensor<T> &tensor,
                 const std::vector<int64_t> &expected) {
  if (tensor.shape != expected)
    throw std::invalid_argument("'" + name + "' expected shape " +
                                formatShape(expected) + ", got " +
                                formatShape(tensor.shape));
}
template void expectShape(const std::string &, const Tensor<float> &,
                          const std::vector<int64_t> &);
template void expectShape(const std::string &, const Tensor<double> &,
                          const std::vector<int64_t> &);
template void expectShape(const std::string &, const Tensor<int64_t> &,
                          const std::vector<int64_t> &);

/// Throws unless `tensor` has rank >= `minRank`.
template <typename T>
static void expectRankAtLeast(const std::string &name, const Tensor<T> &tensor,
                              size_t minRank) {
  if (tensor.shape.size() < minRank)
    throw std::invalid_argument(
        "'" + name + "' expected rank >= " + std::to_string(minRank) +
        ", got shape " + formatShape(tensor.shape));
}

int64_t checkedId(const std::string &name, const IdTensor &ids,
                  int64_t position, int64_t bound) {
  int64_t id = ids.data[position];
  if (id < 0 || id >= bound)
    throw std::invalid_argument(
        "'" + name + "' element " + std::to_string(position) + " is " +
        std::to_string(id) + ", outside [0, " + std::to_string(bound) + ")");
  return id;
}

FloatTensor embedding(const FloatTensor &table, const IdTensor &ids) {
  if (table.shape.size() != 2)
    throw std::invalid_argument("'table' expected rank 2 [V, E], got shape " +
                                formatShape(table.shape));
  int64_t vocab = table.dim(0), width = table.dim(1);
  std::vector<int64_t> shape = ids.shape;
  shape.push_back(width);
  FloatTensor result(shape);
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t id = checkedId("ids", ids, i, vocab);
    std::copy_n(&table.data[id * width], width, &result.data[i * width]);
  }
  return result;
}

LstmResult lstm(const FloatTensor &input, const FloatTensor &wIh,
                const FloatTensor &wHh, const FloatTensor *bIh,
                const FloatTensor *bHh, const FloatTensor *h0,
                const FloatTensor *c0, bool reverse, const FloatTensor *wHr,
                const IdTensor *lengths) {
  if (input.shape.size() != 3)
    throw std::invalid_argument(
        "'input' expected rank 3 [T, B, I], got shape " +
        formatShape(input.shape));
  if (wHh.shape.size() != 2)
    throw std::invalid_argument("'w_hh' expected rank 2 [4H, H], got shape " +
                                formatShape(wHh.shape));
  if (wHr && wHr->shape.size() != 2)
    throw std::invalid_argument("'w_hr' expected rank 2 [P, H], got shape " +
                                formatShape(wHr->shape));
  int64_t steps = input.dim(0), batch = input.dim(1), inputSize = input.dim(2);
  // With a projection w_hr [P, H], h is [B, P]; c stays [B, H].
  int64_t hidden = wHr ? wHr->dim(1) : wHh.dim(1);
  int64_t output = wHr ? wHr->dim(0) : hidden;
  expectShape("w_ih", wIh, {4 * hidden, inputSize});
  expectShape("w_hh", wHh, {4 * hidden, output});
  if (bool(bIh) != bool(bHh))
    throw std::invalid_argument("an LSTM takes both biases b_ih and b_hh or "
                                "neither");
  if (bIh) {
    expectShape("b_ih", *bIh, {4 * hidden});
    expectShape("b_hh", *bHh, {4 * hidden});
  }
  if (h0)
    expectShape("h0", *h0, {batch, output});
  if (c0)
    expectShape("c0", *c0, {batch, hidden});

  std::vector<int64_t> rowLengths = sequenceLengths(lengths, steps, batch);
  std::vector<double> h(batch * output, 0.0), c(batch * hidden, 0.0);
  if (h0)
    std::copy(h0->data.begin(), h0->data.end(), h.begin());
  if (c0)
    std::copy(c0->data.begin(), c0->data.end(), c.begin());

  LstmResult result{FloatTensor({steps, batch, output}),
                    FloatTensor({batch, output}), FloatTensor({batch, hidden})};
  std::vector<double> gates(4 * hidden), cellH(hidden), nextH(batch * output);
  for (int64_t step = 0; step < steps; ++step) {
    int64_t t = reverse ? steps - 1 - step : step;
    for (int64_t b = 0; b < batch; ++b) {
      // Past its length a row keeps its state, and its output is zero.
      if (!rowLengths.empty() && t >= rowLengths[b]) {
        std::copy_n(&h[b * output], output, &nextH[b * output]);
        continue;
      }
      lstmCellStep(wIh.data.data(), wHh.data.data(),
                   bIh ? bIh->data.data() : nullptr,
                   bHh ? bHh->data.data() : nullptr, inputSize, hidden, output,
                   &input.data[(t * batch + b) * inputSize], &h[b * output],
                   &c[b * hidden], gates.data(), &c[b * hidden],
                   wHr ? cellH.data() : &nextH[b * output]);
      if (!wHr)
        continue;
      for (int64_t p = 0; p < output; ++p) {
        double sum = 0.0;
        for (int64_t k = 0; k < hidden; ++k)
          sum += double(wHr->data[p * hidden + k]) * cellH[k];
        nextH[b * output + p] = sum;
      }
    }
    h.swap(nextH);
    std::copy(h.begin(), h.end(), &result.y.data[t * batch * output]);
    for (int64_t b = 0; b < int64_t(rowLengths.size()); ++b)
      if (t >= rowLengths[b])
        std::fill_n(&result.y.data[(t * batch + b) * output], output, 0.0f);
  }
  std::copy(h.begin(), h.end(), result.hN.data.begin());
  std::copy(c.begin(), c.end(), result.cN.data.begin());
  return result;
}

template <typename T>
Tensor<T> transpose(const Tensor<T> &input,
                    const std::vector<int64_t> &permutation) {
  size_t rank = input.shape.size();
  std::vector<bool> seen(rank, false);
  bool valid = permutation.size() == rank;
  for (int64_t dim : permutation) {
    valid = valid && dim >= 0 && dim < int64_t(rank) && !seen[dim];
    if (valid)
      seen[dim] = true;
  }
  if (!valid)
    throw std::invalid_argument("permutation " + formatShape(permutation) +
                                " does not permute the dimensions of 'input' " +
                                formatShape(input.shape));
  std::vector<int64_t> shape(rank), inputStrides(rank, 1);
  for (size_t k = rank; k-- > 1;)
    inputStrides[k - 1] = inputStrides[k] * input.shape[k];
  for (size_t k = 0; k < rank; ++k)
    shape[k] = input.shape[permutation[k]];
  Tensor<T> result(shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < result.numElements(); ++i) {
    int64_t source = 0;
    for (size_t k = 0; k < rank; ++k)
      source += index[k] * inputStrides[permutation[k]];
    result.data[i] = input.data[source];
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k])
        break;
      index[k] = 0;
    }
  }
  return result;
}
template FloatTensor transpose(const FloatTensor &,
                               const std::vector<int64_t> &);
template IdTensor transpose(const IdTensor &, const std::vector<int64_t> &);

FloatTensor concat(const std::vector<const FloatTensor *> &inputs,
                   int64_t dim) {
  if (inputs.empty())
    throw std::invalid_argument("concat needs at least one input");
  std::vector<int64_t> shape = inputs.front()->shape;
  if (dim < 0 || dim >= int64_t(shape.size()))
    throw std::invalid_argument("concat dimension " + std::to_string(dim) +
                                " is outside the inputs' rank " +
                                std::to_string(shape.size()));
  shape[dim] = 0;
  for (const FloatTensor *input : inputs) {
    std::vector<int64_t> expected = inputs.front()->shape;
    expected[dim] =
        input->shape.size() == expected.size() ? input->dim(dim) : 0;
    expectShape("inputs", *input, expected);
    shape[dim] += input->dim(dim);
  }
  // Rows of the dimensions before `dim`, each the inputs' slabs one after
  // another.
  int64_t rows = 1, inner = 1;
  for (int64_t k = 0; k < dim; ++k)
    rows *= shape[k];
  for (size_t k = dim + 1; k < shape.size(); ++k)
    inner *= shape[k];
  FloatTensor result(shape);
  float *out = result.data.data();
  for (int64_t row = 0; row < rows; ++row)
    for (const FloatTensor *input : inputs) {
      int64_t slab = input->dim(dim) * inner;
      out = std::copy_n(&input->data[row * slab], slab, out);
    }
  return result;
}

FloatTensor linear(const FloatTensor &input, const FloatTensor &weight,
                   const FloatTensor *bias) {
  expectRankAtLeast("input", input, 1);
  if (weight.shape.size() != 2)
    throw std::invalid_argument("'weight' expected rank 2 [N, K], got shape " +
                                formatShape(weight.shape));
  int64_t in = input.dim(-1), out = weight.dim(0);
  expectShape("weight", weight, {out, in});
  if (bias)
    expectShape("bias", *bias, {out});
  std::vector<int64_t> shape = input.shape;
  shape.back() = out;
  FloatTensor result(shape);
  int64_t rows = input.numElements() / std::max<int64_t>(in, 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < out; ++n) {
      double sum = bias ? bias->data[n] : 0.0;
      for (int64_t k = 0; k < in; ++k)
        sum += double(input.data[r * in + k]) * weight.data[n * in + k];
      result.data[r * out + n] = float(sum);
    }
  return result;
}

/// log Σ exp over one row, shifted by the maximum for stability.
static double logSumExp(const float *row, int64_t size) {
  double max = *std::max_element(row, row + size);
  double sum = 0;
  for (int64_t i = 0; i < size; ++i)
    sum += std::exp(double(row[i]) - max);
  return max + std::log(sum);
}

FloatTensor logSoftmax(const FloatTensor &input) {
  expectRankAtLeast("input", input, 1);
  FloatTensor result(input.shape);
  int64_t size = input.dim(-1);
  for (int64_t r = 0; size && r < input.numElements() / size; ++r) {
    const float *row = &input.data[r * size];
    double norm = logSumExp(row, size);
    for (int64_t i = 0; i < size; ++i)
      result.data[r * size + i] = float(row[i] - norm);
  }
  return result;
}

FloatTensor crossEntropy(const FloatTensor &logits, const IdTensor &targets,
                         Reduction reduction) {
  expectRankAtLeast("logits", logits, 1);
  int64_t classes = logits.dim(-1);
  std::vector<int64_t> targetShape(logits.shape.begin(),
                                   logits.shape.end() - 1);
  expectShape("targets", targets, targetShape);
  FloatTensor perToken(targetShape);
  double total = 0;
  for (int64_t r = 0; r < targets.numElements(); ++r) {
    int64_t target = checkedId("targets", targets, r, classes);
    const float *row = &logits.data[r * classes];
    double loss = logSumExp(row, classes) - row[target];
    perToken.data[r] = float(loss);
    total += loss;
  }
  if (reduction == Reduction::None)
    return perToken;
  if (reduction == Reduction::Mean)
    total /= double(targets.numElements());
  return FloatTensor({}, {float(total)});
}

/// The weight called `name`, or an error naming it.
static const FloatTensor &
weight(const std::map<std::string, FloatTensor> &weights,
       const std::string &name) {
  auto it = weights.find(name);
  if (it == weights.end())
    throw std::invalid_argument("missing weight '" + name + "'");
  return it->second;
}

FloatTensor lstmLm(const std::map<std::string, FloatTensor> &weights,
                   const IdTensor &tokens) {
  FloatTensor x = embedding(weight(weights, "embedding.weight"), tokens);
  int64_t layers = 0;
  while (weights.count("lstm.weight_ih_l" + std::to_string(layers)))
    ++layers;
  if (layers == 0)
    throw std::invalid_argument("missing weight 'lstm.weight_ih_l0'");
  for (int64_t k = 0; k < layers; ++k) {
    std::string suffix = "_l" + std::to_string(k);
    x = lstm(x, weight(weights, "lstm.weight_ih" + suffix),
             weight(weights, "lstm.weight_hh" + suffix),
             &weight(weights, "lstm.bias_ih" + suffix),
             &weight(weights, "lstm.bias_hh" + suffix))
            .y;
  }
  return linear(x, weight(weights, "proj.weight"),
                &weight(weights, "proj.bias"));
}

} // namespace recur::reference
