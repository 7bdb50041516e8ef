//===- Check.h - recur-run's comparisons with the reference -----*- C++ -*-===//

#ifndef RECUR_TOOLS_RECUR_RUN_CHECK_H
#define RECUR_TOOLS_RECUR_RUN_CHECK_H

#include "HostTensors.h"
#include "reference/Training.h"

#include <nlohmann/json.hpp>

namespace recur::run {

struct Comparison {
  double maxAbs = 0, maxRel = 0;
  /// NaN or infinite elements, in the output and in the reference.
  int64_t nonFinite = 0, nonFiniteReference = 0;
  bool pass = true;
};

/// `got` against the reference's `want`: every element within `tolerance`
/// * (1 + |want|).
Comparison compare(const DLTensor &got, const ref::FloatTensor &want,
                   double tolerance);

/// The gradients a training step's first step applies, by the reference
/// (runtime/reference/Training.h: double precision, clipped as the step
/// clips), from the weights as bound.
ref::DoubleTensors referenceGradients(const nlohmann::json &training,
                                      const std::vector<HostTensor> &before,
                                      const std::vector<HostTensor> &inputs);

/// A training step's gradients, read off its first step's change of each
/// updated weight (g = (before - after) / lr), against the reference's. An
/// element passes within `tolerance` times the weight's largest reference
/// gradient, plus one f32 ulp of the new weight over lr: the part of the
/// step an f32 weight cannot hold.
nlohmann::json checkGradients(const nlohmann::json &training,
                              const ref::DoubleTensors &gradients,
                              const std::vector<HostTensor> &before,
                              const std::vector<HostTensor> &after,
                              double tolerance);

} // namespace recur::run

#endif // RECUR_TOOLS_RECUR_RUN_CHECK_H
