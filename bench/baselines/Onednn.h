//===- Onednn.h - what the oneDNN baseline's files share -------*- C++ -*-===//

#ifndef RECUR_BENCH_ONEDNN_H
#define RECUR_BENCH_ONEDNN_H

#include "Baseline.h"

namespace bench {

/// PyTorch's [4H, I] LSTM weight is oneDNN's ldigo layer l, [I][4][H] (the
/// gates in the same order): writes `weight` into layer `l` of `ldigo`.
inline void toLdigo(const float *weight, int64_t l, int64_t I, int64_t H,
                    float *ldigo) {
  for (int64_t g = 0; g < 4 * H; ++g)
    for (int64_t i = 0; i < I; ++i)
      ldigo[(l * I + i) * 4 * H + g] = weight[g * I + i];
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
