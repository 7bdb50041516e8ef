//===- ModelGen.h - recur IR for standard architectures ---------*- C++ -*-===//
//
// Builds recur dialect modules for standard recurrent models from a few sizes.
// Weight arguments carry the `state_dict` keys of the PyTorch module they
// mirror, so a runtime can bind a saved state_dict by name.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_GEN_MODELGEN_H
#define RECUR_GEN_MODELGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::recur {

/// The recurrent layers' cell: nn.LSTM's, nn.GRU's or nn.RNN's (with tanh
/// or ReLU).
enum class CellKind { lstm, gru, rnnTanh, rnnRelu };

/// Sizes shared by the generated models. An absent seq/batch is dynamic.
struct SequenceConfig {
  CellKind cell = CellKind::lstm;
  std::optional<int64_t> seq;
  std::optional<int64_t> batch;
  /// Element type of weights and activations: "f32", "f16" or "bf16".
  std::string dtype = "f32";
  /// The LSTM's state in and out, as nn.LSTM's (h0, c0) and (h_n, c_n), one
  /// [B, units] tensor per layer and direction (h: P units with a
  /// projection, else hidden; c: hidden): inputs `h0_l<k>`, `c0_l<k>`
  /// (`..._reverse` for the backward direction) after the model's others,
  /// outputs `h_n_l<k>`, `c_n_l<k>` after its result. A
  /// long text then runs batch after batch with the state carried.
  bool state = false;
  /// nn.LSTM's options. `batchFirst`: the sequence input and output are
  /// [B, T, ...] (the LM's tokens [B, T], logits [B, T, vocab]); the state
  /// stays [B, hidden]. `bias = false`: no bias_ih/bias_hh weights.
  /// `bidirectional`: each layer also runs backward in time, with weights
  /// and state named `..._l<k>_reverse`, and returns both directions' hidden
  /// states side by side ([..., 2 * hidden]).
  bool batchFirst = false;
  bool bias = true;
  bool bidirectional = false;
  /// nn.LSTM(proj_size=P): every step projects h to P < hidden units with a
  /// `weight_hr_l<k>` [P, hidden]; h, the state h0/h_n and the output have P.
  /// 0: no projection.
  int64_t projSize = 0;
  /// Each row's length, as a packed batch: input `lengths` [B] (int64)
  /// after the sequence (and the targets), before the state.
  bool lengths = false;
  /// Also return every layer's output sequence, `y_l<k>` (marked
  /// `recur.kept`: for a backward, not a result users read), after the
  /// other outputs; a stack's last layer's is its output already. The
  /// forward half of a training pair whose backward is `vjp`.
  bool keepActivations = false;
  /// Mark the entry `recur.vjp`: recur-compile builds its vector-Jacobian
  /// product (recur-differentiate), the backward pass, which takes the
  /// kept activations (implies keepActivations).
  bool vjp = false;
};

/// A training step's optimizer: SGD, after clipping the gradients' global
/// norm to `clipNorm` when it is positive. The defaults are those of
/// PyTorch's word_language_model example (--lr 20 --clip 0.25).
struct TrainConfig {
  double lr = 20;
  double clipNorm = 0.25;
};

/// A language model: PyTorch module with `embedding` (nn.Embedding),
/// `lstm` (nn.LSTM, `layers` layers; `gru` or `rnn` for nn.GRU and nn.RNN
/// layers) and `proj` (nn.Linear) attributes.
/// `forward(tokens [T,B] i64, weights...) -> logits [T,B,vocab]`; with
/// `train`, a training step instead:
/// `forward(tokens, targets [T,B] i64, weights...) -> loss` (the mean cross
/// entropy), marked `recur.train` for recur-differentiate.
struct LstmLmConfig : SequenceConfig {
  int64_t vocab = 10001;
  int64_t embed = 128;
  int64_t hidden = 256;
  int64_t layers = 3;
  std::optional<TrainConfig> train;
  /// Return log_softmax(logits) over the vocabulary as `log_probs` (what
  /// PyTorch's word_language_model returns) instead of the logits.
  bool logSoftmax = false;
};

/// A stack of recurrent layers alone, as a bare nn.LSTM (nn.GRU, nn.RNN)
/// saves it (`weight_ih_l0`, ...).
/// `forward(input [T,B,input], weights...) -> output [T,B,hidden]`.
struct LstmStackConfig : SequenceConfig {
  int64_t input = 512;
  int64_t hidden = 512;
  int64_t layers = 1;
};

/// The first problem with the configuration as a user-facing message naming
/// the flag, or an empty string when it is valid.
std::string validate(const LstmLmConfig &config);
std::string validate(const LstmStackConfig &config);

/// Build the model's module; the configuration must be valid.
OwningOpRef<ModuleOp> buildLstmLm(MLIRContext &context,
                                  const LstmLmConfig &config);
OwningOpRef<ModuleOp> buildLstmStack(MLIRContext &context,
                                     const LstmStackConfig &config);

} // namespace mlir::recur

#endif // RECUR_GEN_MODELGEN_H
