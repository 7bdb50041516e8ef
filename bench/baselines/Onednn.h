//===- Onednn.h - what the oneDNN baseline's files share -------*- C++ -*-===//

#ifndef RECUR_BENCH_ONEDNN_H
#define RECUR_BENCH_ONEDNN_H

#include "Baseline.h"

namespace bench {

/// PyTorch's [G·H, I] weight of a cell is oneDNN's ldigo layer l, [I][G][H],
/// oneDNN's gate k PyTorch's gate `order[k]` (an LSTM's are in the same
/// order; a GRU's u, r, o are PyTorch's z, r, n): writes `weight` into layer
/// `l` of `ldigo`.
inline void toLdigoGates(const float *weight, int64_t l, int64_t I, int64_t H,
                         const std::vector<int64_t> &order, float *ldigo) {
  int64_t gates = order.size();
  for (int64_t k = 0; k < gates; ++k)
    for (int64_t j = 0; j < H; ++j)
      for (int64_t i = 0; i < I; ++i)
        ldigo[(l * I + i) * gates * H + k * H + j] =
            weight[(order[k] * H + j) * I + i];
}

/// An LSTM's [4H, I] weight (its gates in oneDNN's order).
inline void toLdigo(const float *weight, int64_t l, int64_t I, int64_t H,
                    float *ldigo) {
  toLdigoGates(weight, l, I, H, {0, 1, 2, 3}, ldigo);
}

/// The inverse of toLdigo: layer `l` of `ldigo` as PyTorch's [4H, I].
inline void fromLdigo(const float *ldigo, int64_t l, int64_t I, int64_t H,
                      float *weight) {
  for (int64_t g = 0; g < 4 * H; ++g)
    for (int64_t i = 0; i < I; ++i)
      weight[g * I + i] = ldigo[(l * I + i) * 4 * H + g];
}

/// Runs the LM's SGD training step (--lr) with oneDNN's training primitives
/// (onednn_lm_train.cpp): writes the first step's loss and the weights after
/// it to --outputs, then times warmup + iters more steps and reports them.
void runOnednnTraining(const Options &options, const Model &model,
                       const nlohmann::json &versions);

} // namespace bench

#endif // RECUR_BENCH_ONEDNN_H
