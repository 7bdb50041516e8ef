//===- Cells.cpp - the GRU and Elman RNN layers, in double ----------------===//
//
// PyTorch's nn.GRU and nn.RNN layers written from their documented
// formulas, step by step and row by row, with sums in double: the
// reference a compiled recur.gru / rnn_tanh / rnn_relu is checked against.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace recur::reference {

namespace {

/// x · wᵀ + b for one row: `rows` sums over `size` inputs.
void affineRow(const float *w, const float *bias, const float *x,
               const double *xDouble, int64_t rows, int64_t size,
               double *result) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = bias ? bias[r] : 0.0;
    for (int64_t k = 0; k < size; ++k)
      sum += double(w[r * size + k]) * (x ? double(x[k]) : xDouble[k]);
    result[r] = sum;
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

int64_t gatesOf(RnnCell cell) { return cell == RnnCell::Gru ? 3 : 1; }

} // namespace

std::vector<int64_t> sequenceLengths(const IdTensor *lengths, int64_t steps,
                                     int64_t batch) {
  if (!lengths)
    return {};
  expectShape("lengths", *lengths, {batch});
  for (int64_t b = 0; b < batch; ++b)
    if (lengths->data[b] < 1 || lengths->data[b] > steps)
      throw std::invalid_argument(
          "'lengths' holds " + std::to_string(lengths->data[b]) + " for row " +
          std::to_string(b) + "; each row's length lies in [1, T] = [1, " +
          std::to_string(steps) + "]");
  return lengths->data;
}

RnnResult rnn(RnnCell cell, const FloatTensor &input, const FloatTensor &wIh,
              const FloatTensor &wHh, const FloatTensor *bIh,
              const FloatTensor *bHh, const FloatTensor *h0, bool reverse,
              const IdTensor *lengths) {
  if (input.shape.size() != 3)
    throw std::invalid_argument(
        "'input' expected rank 3 [T, B, I], got shape " +
        formatShape(input.shape));
  int64_t gates = gatesOf(cell);
  if (wHh.shape.size() != 2)
    throw std::invalid_argument("'w_hh' expected rank 2 [" +
                                std::to_string(gates) + "H, H], got shape " +
                                formatShape(wHh.shape));
  int64_t steps = input.dim(0), batch = input.dim(1), inputSize = input.dim(2);
  int64_t hidden = wHh.dim(1);
  expectShape("w_ih", wIh, {gates * hidden, inputSize});
  expectShape("w_hh", wHh, {gates * hidden, hidden});
  if (bool(bIh) != bool(bHh))
    throw std::invalid_argument("a recurrence takes both biases b_ih and "
                                "b_hh or neither");
  if (bIh) {
    expectShape("b_ih", *bIh, {gates * hidden});
    expectShape("b_hh", *bHh, {gates * hidden});
  }
  if (h0)
    expectShape("h0", *h0, {batch, hidden});

  std::vector<int64_t> rowLengths = sequenceLengths(lengths, steps, batch);
  std::vector<double> h(batch * hidden, 0.0), next(batch * hidden);
  if (h0)
    std::copy(h0->data.begin(), h0->data.end(), h.begin());
  RnnResult result{FloatTensor({steps, batch, hidden}),
                   FloatTensor({batch, hidden})};
  std::vector<double> gi(gates * hidden), gh(gates * hidden);
  for (int64_t step = 0; step < steps; ++step) {
    int64_t t = reverse ? steps - 1 - step : step;
    for (int64_t b = 0; b < batch; ++b) {
      const double *hPrev = &h[b * hidden];
      // Past its length a row keeps its state, and its output is zero.
      if (!rowLengths.empty() && t >= rowLengths[b]) {
        std::copy(hPrev, hPrev + hidden, &next[b * hidden]);
        continue;
      }
      affineRow(wIh.data.data(), bIh ? bIh->data.data() : nullptr,
                &input.data[(t * batch + b) * inputSize], nullptr,
                gates * hidden, inputSize, gi.data());
      affineRow(wHh.data.data(), bHh ? bHh->data.data() : nullptr, nullptr,
                hPrev, gates * hidden, hidden, gh.data());
      for (int64_t j = 0; j < hidden; ++j) {
        double value;
        switch (cell) {
        case RnnCell::Gru: {
          // r, z, n; n's recurrent part (with b_hn) scaled by r.
          double r = sigmoid(gi[j] + gh[j]);
          double z = sigmoid(gi[hidden + j] + gh[hidden + j]);
          double n = std::tanh(gi[2 * hidden + j] + r * gh[2 * hidden + j]);
          value = (1.0 - z) * n + z * hPrev[j];
          break;
        }
        case RnnCell::Tanh:
          value = std::tanh(gi[j] + gh[j]);
          break;
        case RnnCell::Relu:
          value = std::max(0.0, gi[j] + gh[j]);
          break;
        }
        next[b * hidden + j] = value;
      }
    }
    h.swap(next);
    std::copy(h.begin(), h.end(), &result.y.data[t * batch * hidden]);
    for (int64_t b = 0; b < int64_t(rowLengths.size()); ++b)
      if (t >= rowLengths[b])
        std::fill_n(&result.y.data[(t * batch + b) * hidden], hidden, 0.0f);
  }
  std::copy(h.begin(), h.end(), result.hN.data.begin());
  return result;
}

} // namespace recur::reference
