//===- Check.cpp - recur-run's comparisons with the reference -------------===//

#include "Check.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace recur::run;
using nlohmann::json;

Comparison recur::run::compare(const DLTensor &got,
                               const ref::FloatTensor &want, double tolerance) {
  Comparison result;
  const void *data = static_cast<const char *>(got.data) + got.byte_offset;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double value = floatAt(data, got.dtype, i);
    double expected = want.data[i], diff = std::fabs(value - expected);
    if (!(diff <= tolerance * (1 + std::fabs(expected))))
      result.pass = false;
    // std::max would drop a NaN difference; count them instead.
    result.nonFinite += !std::isfinite(value);
    result.nonFiniteReference += !std::isfinite(expected);
    if (!std::isfinite(diff))
      continue;
    result.maxAbs = std::max(result.maxAbs, diff);
    // Relative error is only meaningful away from zero.
    if (std::fabs(expected) >= 1e-3)
      result.maxRel = std::max(result.maxRel, diff / std::fabs(expected));
  }
  return result;
}

/// The gradients a training step's first step applies, by the reference
/// (runtime/reference/Training.h: double precision, clipped as the step
/// clips), from the weights as bound.
ref::DoubleTensors
recur::run::referenceGradients(const json &training,
                               const std::vector<HostTensor> &before,
                               const std::vector<HostTensor> &inputs) {
  std::map<std::string, ref::FloatTensor> weights;
  for (const HostTensor &weight : before)
    weights[weight.name] = std::get<ref::FloatTensor>(toReference(weight));
  auto ids = [&](const char *name) {
    const HostTensor &input = findTensor(inputs, name);
    if (!isI64(input.info.dtype))
      die(std::string("--check: the training step's input '") + name +
          "' is not i64");
    return std::get<ref::IdTensor>(toReference(input));
  };
  double clipNorm = training.value("clip_norm", 0.0);
  ref::LossGradients expected;
  try {
    expected = ref::lstmLmLossGradients(ref::toDouble(weights), ids("tokens"),
                                        ids("targets"));
  } catch (const std::exception &error) {
    die(std::string("--check: the gradient reference (an LSTM LM's, "
                    "recur-gen lstm-lm --train) failed: ") +
        error.what());
  }
  if (clipNorm > 0)
    ref::clipGradientNorm(expected.gradients, clipNorm);
  return expected.gradients;
}

/// A training step's gradients, read off its first step's change of each
/// updated weight (g = (before - after) / lr), against the reference's. An
/// element passes within `tolerance` times the weight's largest reference
/// gradient, plus one f32 ulp of the new weight over lr: the part of the
/// step an f32 weight cannot hold.
json recur::run::checkGradients(const json &training,
                                const ref::DoubleTensors &gradients,
                                const std::vector<HostTensor> &before,
                                const std::vector<HostTensor> &after,
                                double tolerance) {
  double lr = training.at("lr");
  json entries = json::array();
  for (const std::string name : training.at("updates")) {
    const HostTensor &old = findTensor(before, name);
    const HostTensor &updated = findTensor(after, name);
    const ref::DoubleTensor &want = gradients.at(name);
    const auto *oldData = reinterpret_cast<const float *>(old.bytes.data());
    const auto *newData = reinterpret_cast<const float *>(updated.bytes.data());
    double largest = 0, maxAbs = 0;
    for (double value : want.data)
      largest = std::max(largest, std::fabs(value));
    bool pass = true;
    for (size_t i = 0; i < want.data.size(); ++i) {
      double got = (double(oldData[i]) - double(newData[i])) / lr;
      double diff = std::fabs(got - want.data[i]);
      double ulp = std::fabs(double(newData[i])) * 0x1p-23 / lr;
      pass &= diff <= tolerance * largest + ulp; // false on NaN
      if (std::isfinite(diff))
        maxAbs = std::max(maxAbs, diff);
    }
    entries.push_back({{"name", "gradient of " + name},
                       {"kind", "gradient"},
                       {"tolerance", tolerance},
                       {"max_abs_error", maxAbs},
                       {"largest_gradient", largest},
                       {"pass", pass}});
  }
  return entries;
}
