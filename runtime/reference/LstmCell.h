//===- LstmCell.h - One LSTM cell step, shared by the references -*- C++
//-*-===//

#ifndef RECUR_REFERENCE_LSTMCELL_H
#define RECUR_REFERENCE_LSTMCELL_H

#include <cmath>
#include <cstdint>

namespace recur::reference {

/// One step of one batch row of an LSTM layer, as PyTorch's nn.LSTM (gate
/// order i, f, g, o): from input `x` [I] and the previous `hPrev`, `cPrev`
/// [H] (`hPrev` has `hPrevSize` elements: H, or P for a projected LSTM),
/// the activated gates [4H] and the new `c` and `h` [H], sums in double.
/// Weights are row-major [4H, I] and [4H, hPrevSize]; null biases are zero.
/// The forward reference (float weights) and the training reference
/// (double) share it.
template <typename Weight, typename Input>
void lstmCellStep(const Weight *wIh, const Weight *wHh, const Weight *bIh,
                  const Weight *bHh, int64_t inputSize, int64_t hidden,
                  int64_t hPrevSize, const Input *x, const double *hPrev,
                  const double *cPrev, double *gates, double *c, double *h) {
  for (int64_t g = 0; g < 4 * hidden; ++g) {
    double sum = bIh ? double(bIh[g]) + double(bHh[g]) : 0.0;
    for (int64_t k = 0; k < inputSize; ++k)
      sum += double(wIh[g * inputSize + k]) * double(x[k]);
    for (int64_t k = 0; k < hPrevSize; ++k)
      sum += double(wHh[g * hPrevSize + k]) * hPrev[k];
    gates[g] = g / hidden == 2 ? std::tanh(sum) : 1.0 / (1.0 + std::exp(-sum));
  }
  for (int64_t j = 0; j < hidden; ++j) {
    c[j] = gates[hidden + j] * cPrev[j] + gates[j] * gates[2 * hidden + j];
    h[j] = gates[3 * hidden + j] * std::tanh(c[j]);
  }
}

} // namespace recur::reference

#endif // RECUR_REFERENCE_LSTMCELL_H
