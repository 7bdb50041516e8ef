//===- OnednnTraining.h - the oneDNN baseline's training step -*- C++ -*-===//

#ifndef RECUR_BENCH_ONEDNNTRAINING_H
#define RECUR_BENCH_ONEDNNTRAINING_H

#include "Baseline.h"

namespace bench {

/// Runs the LM's SGD training step (--lr) with oneDNN's training primitives
/// (onednn_lm_train.cpp): writes the first step's loss and the weights after
/// it to --outputs, then times warmup + iters more steps and reports them.
void runOnednnTraining(const Options &options, const Model &model,
                       const nlohmann::json &versions);

} // namespace bench

#endif // RECUR_BENCH_ONEDNNTRAINING_H
