//===- Reference.h - Plain C++ reference of the recur ops -------*- C++ -*-===//
//
// Straightforward loops, accumulation in double, no dependence on the compiler
// or on generated code: the yardstick compiled models are checked against.
// Semantics and layouts are PyTorch's (nn.Embedding, nn.LSTM with gate order
// i, f, g, o, nn.Linear, log_softmax and cross_entropy over the last
// dimension). Invalid arguments throw std::invalid_argument naming the tensor,
// the expected and the actual shape.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_REFERENCE_REFERENCE_H
#define RECUR_REFERENCE_REFERENCE_H

#include "Shapes.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace recur::reference {

/// A dense row-major tensor.
template <typename T> struct Tensor {
  std::vector<int64_t> shape;
  std::vector<T> data;

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<T> data);
  /// A zero-filled tensor of `shape`.
  explicit Tensor(std::vector<int64_t> shape);

  int64_t numElements() const;
  int64_t dim(int64_t index) const {
    return shape.at(index < 0 ? shape.size() + index : index);
  }
};

using FloatTensor = Tensor<float>;
using IdTensor = Tensor<int64_t>;

/// Throws std::invalid_argument unless `tensor`, called `name` in the
/// message, has exactly the shape `expected`.
template <typename T>
void expectShape(const std::string &name, const Tensor<T> &tensor,
                 const std::vector<int64_t> &expected);

/// Element `position` of `ids`, called `name` in the message, checked to lie
/// in [0, bound); std::invalid_argument otherwise.
int64_t checkedId(const std::string &name, const IdTensor &ids,
                  int64_t position, int64_t bound);

enum class Reduction { None, Mean, Sum };

/// `[..., E]` rows of `table [V, E]` at `ids [...]`.
FloatTensor embedding(const FloatTensor &table, const IdTensor &ids);

struct LstmResult {
  FloatTensor y;  // [T, B, H]
  FloatTensor hN; // [B, H]
  FloatTensor cN; // [B, H]
};

/// One LSTM layer over `input [T, B, I]`; absent (null) biases and h0/c0
/// are zero. `reverse` runs the steps from T-1 down to 0 (a bidirectional
/// layer's backward direction); `wHr [P, H]` projects h every step
/// (proj_size: h0, h_n [B, P], y [T, B, P]).
LstmResult lstm(const FloatTensor &input, const FloatTensor &wIh,
                const FloatTensor &wHh, const FloatTensor *bIh,
                const FloatTensor *bHh, const FloatTensor *h0 = nullptr,
                const FloatTensor *c0 = nullptr, bool reverse = false,
                const FloatTensor *wHr = nullptr,
                const IdTensor *lengths = nullptr);

/// The cells of nn.GRU and nn.RNN (nonlinearity tanh or relu).
enum class RnnCell { Gru, Tanh, Relu };

struct RnnResult {
  FloatTensor y;  // [T, B, H]
  FloatTensor hN; // [B, H]
};

/// One GRU or Elman RNN layer over `input [T, B, I]`, PyTorch's formulas
/// and gate order (GRU: r, z, n, the reset gate applied to the recurrent
/// product with b_hn); weights [G·H, I] and [G·H, H]; absent biases and h0
/// are zero; `reverse` runs the steps from T-1 down to 0; `lengths` (if
/// any) each row's length, as a packed batch's (sequenceLengths) (Cells.cpp).
RnnResult rnn(RnnCell cell, const FloatTensor &input, const FloatTensor &wIh,
              const FloatTensor &wHh, const FloatTensor *bIh,
              const FloatTensor *bHh, const FloatTensor *h0 = nullptr,
              bool reverse = false, const IdTensor *lengths = nullptr);

/// Each row's sequence length from `lengths [B]` for an input of `steps`
/// steps and `batch` rows, checked to lie in 1..steps; none without
/// `lengths`. Row b runs steps 0 … len_b - 1 (in reverse, len_b - 1 down
/// to 0); its output is zero past its length and its final state is that
/// after its last step, as PyTorch's packed sequences have it.
std::vector<int64_t> sequenceLengths(const IdTensor *lengths, int64_t steps,
                                     int64_t batch);

/// `input` with dimension k of the result dimension `permutation[k]` of the
/// input (torch.permute).
template <typename T>
Tensor<T> transpose(const Tensor<T> &input,
                    const std::vector<int64_t> &permutation);

/// `inputs` joined along `dim` (torch.cat); their other dimensions agree.
FloatTensor concat(const std::vector<const FloatTensor *> &inputs, int64_t dim);

/// `input [..., K] · weightᵀ [K, N] + bias [N]`; a null bias is zero.
FloatTensor linear(const FloatTensor &input, const FloatTensor &weight,
                   const FloatTensor *bias = nullptr);

/// log_softmax over the last dimension.
FloatTensor logSoftmax(const FloatTensor &input);

/// Cross entropy of `targets [...]` under `logits [..., C]`: rank 0 for Mean
/// and Sum, `[...]` for None.
FloatTensor crossEntropy(const FloatTensor &logits, const IdTensor &targets,
                         Reduction reduction = Reduction::Mean);

/// The LSTM language model that `recur-gen lstm-lm` writes, with weights by
/// their state_dict names (embedding.weight, lstm.weight_ih_l{k}, ...,
/// proj.weight, proj.bias); the layer count is read off the names.
/// Returns logits [T, B, V].
FloatTensor lstmLm(const std::map<std::string, FloatTensor> &weights,
                   const IdTensor &tokens);

/// "[2, 3]": how messages print shapes.
using ::recur::formatShape;

} // namespace recur::reference

#endif // RECUR_REFERENCE_REFERENCE_H
