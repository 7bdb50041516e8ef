//===- Description.h - what a compiled model expects ------------*- C++ -*-===//
//
// The JSON description recur-compile writes into every model (docs/runtime.md):
// its target and the specs of its inputs, weights and outputs.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_DESCRIPTION_H
#define RECUR_RUNTIME_DESCRIPTION_H

#include "recur/runtime.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace recur::runtime {

/// Thrown inside the runtime, turned into a RecurError at the C boundary.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorSpec {
  std::string name;
  std::string dtypeName; // "f32", "i64", ...
  DLDataType dtype{};
  std::vector<int64_t> shape;         // -1: dynamic
  std::vector<std::string> dims;      // "T", "B" or "" (static), per dimension
  std::vector<const char *> dimNames; // C strings of `dims`, for the C API
  int64_t indexBound = 0;             // indices lie in [0, bound); 0: none
  bool sequenceLengths = false;       // [B] lengths, each in [1, T]
  int64_t lengthsSteps = -1;          // their static T; -1: the run's
  size_t argumentIndex = 0;           // position in the entry's arguments

  /// "[T, B, 10001]".
  std::string formattedShape() const;
};

struct ModelDescription {
  RecurTarget target = RECUR_TARGET_CPU;
  std::string cudaArch; // "sm_90" for CUDA models
  std::vector<TensorSpec> inputs, weights, outputs;
  /// Tensors computed from the weights by the prologue, once per binding.
  std::vector<TensorSpec> derived;
  /// The prologue's arguments (indices into `weights`) and results (into
  /// `derived`); empty without a prologue.
  std::vector<size_t> prologueWeights, prologueResults;
  /// A training step's weights that every run updates in place (indices
  /// into `weights`); empty for inference models.
  std::vector<size_t> updatedWeights;
  size_t numArguments = 0;

  bool trains() const { return !updatedWeights.empty(); }
};

/// Parses and validates the description of the model at `path` (named in
/// errors). Throws Failure.
ModelDescription parseDescription(const std::string &json,
                                  const std::string &path);

} // namespace recur::runtime

#endif // RECUR_RUNTIME_DESCRIPTION_H
