//===- Options.h - recur-run's command line ---------------------*- C++ -*-===//

#ifndef RECUR_TOOLS_RECUR_RUN_OPTIONS_H
#define RECUR_TOOLS_RECUR_RUN_OPTIONS_H

#include "recur/runtime.h"

#include <cstdint>
#include <optional>
#include <string>

namespace recur::run {

struct Options {
  std::string model;
  std::optional<std::string> weights, inputs, outputs, saveWeights,
      saveReference;
  std::optional<uint64_t> randomWeights, seed;
  std::optional<int64_t> batch, seq;
  std::optional<int> threads;
  // Unset: 1 warmup and 3 timed runs of an inference model, 1 step of a
  // training model (which takes --steps only).
  std::optional<int> warmup, iters, steps;
  bool check = false, json = false, nonStrict = false, convertWeights = false;
  std::optional<double> tolerance; // else per output's dtype
};

/// Prints "recur-run: error: MESSAGE" and exits with `code`.
[[noreturn]] void die(const std::string &message, int code = 1);
/// Dies with `error`'s message, if there is an error (and frees it).
void check(RecurError *error, int code = 1);
/// The command line, checked; prints the usage and exits on --help.
Options parseOptions(int argc, char **argv);

} // namespace recur::run

#endif // RECUR_TOOLS_RECUR_RUN_OPTIONS_H
