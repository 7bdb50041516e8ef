//===- Baseline.h - shared plumbing of the C++ benchmark baselines -*- C++
//-*-===//
//
// The oneDNN and cuDNN baselines run the same model as Recur from the same
// files: weights by their PyTorch names (embedding.weight, lstm.weight_ih_l0
// or gru.weight_ih_l0, ..., proj.weight, proj.bias, or a bare nn.LSTM's or
// nn.GRU's weight_ih_l0, ...), the
// input (tokens [T, B] i64 or input [T, B, I] f32), and write their output
// (logits [T, B, V] or output [T, B, H]) as f32 safetensors. They print one
// JSON object for bench/run: {"times_ms": [...], "compile_s", "versions",
// "notes"} or {"unavailable": reason}.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_BENCH_BASELINE_H
#define RECUR_BENCH_BASELINE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bench {

struct Options {
  std::string weights, inputs, outputs, precision = "fp32";
  int warmup = 10, iters = 50;
  /// A training step (an LM's SGD step, as recur-gen --train): --lr given.
  bool training = false;
  double lr = 0, clipNorm = 0;
};

/// Parses --weights --inputs --outputs [--warmup K] [--iters N]
/// [--precision P] [--lr LR [--clip-norm C]]; exits with `usage` on a bad
/// command line.
Options parseOptions(int argc, char **argv, const char *usage);

[[noreturn]] void die(const std::string &message);
/// Prints {"unavailable": reason} and exits 0: bench/run reports the reason.
[[noreturn]] void unavailable(const std::string &reason);

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// One layer's weights, [G·H, I], [G·H, H], [G·H], [G·H] in PyTorch's gate
/// order: an LSTM's i, f, g, o (G = 4), a GRU's r, z, n (G = 3).
struct LstmLayer {
  Tensor wIh, wHh, bIh, bHh;
};

/// A stacked LSTM or GRU, with embedding and projection when it is a
/// language model.
struct Model {
  bool languageModel = false;
  int64_t seq = 0, batch = 0, inputSize = 0, hidden = 0, vocab = 0;
  /// The cell's gates G: 4 for LSTM layers, 3 for GRU layers.
  int64_t gates = 4;
  Tensor embedding, projWeight, projBias; // language model only
  std::vector<LstmLayer> layers;
  std::vector<int64_t> tokens;  // language model: [T, B]
  std::vector<int64_t> targets; // training: the tokens to predict, [T, B]
  Tensor input;                 // bare LSTM: [T, B, I]
  std::string outputName;

  /// Reads and shape-checks the weights and inputs files; dies with a
  /// message naming the tensor on any mismatch.
  static Model load(const Options &options);
  /// [T, B, V] or [T, B, H].
  std::vector<int64_t> outputShape() const;
};

void writeOutput(const Options &options, const Model &model, const float *data);

/// A named f32 tensor to write.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  const float *data;
};
/// Writes `tensors` to the --outputs file.
void writeOutputs(const Options &options,
                  const std::vector<NamedTensor> &tensors);

/// Runs `batch` warmup + iters times; returns the timed ones' milliseconds.
/// `batch` must wait for the device itself.
std::vector<double> timeBatches(const Options &options,
                                const std::function<void()> &batch);

/// Prints the result for bench/run; `extra` adds fields (peak_device_mib).
void report(const std::vector<double> &timesMs, double compileSeconds,
            const nlohmann::json &versions,
            const std::vector<std::string> &notes,
            const nlohmann::json &extra = nlohmann::json::object());

} // namespace bench

#endif // RECUR_BENCH_BASELINE_H
