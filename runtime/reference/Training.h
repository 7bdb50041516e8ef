//===- Training.h - Reference of the LSTM LM's training step ----*- C++ -*-===//
//
// What a compiled training step (issue 15: recur-gen lstm-lm --train) is
// checked against: the LM's forward, the mean cross-entropy over all T x B
// tokens, the backward through time written out by hand, the global
// gradient-norm clip and the SGD update, with PyTorch's semantics
// (torch.nn.utils.clip_grad_norm_, torch.optim.SGD without momentum). Every
// value is a double, forward activations included, so that the gradients
// can be checked by finite differences; nothing depends on the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_REFERENCE_TRAINING_H
#define RECUR_REFERENCE_TRAINING_H

#include "reference/Reference.h"

namespace recur::reference {

using DoubleTensor = Tensor<double>;
/// Weights or their gradients, by state_dict name (embedding.weight,
/// lstm.weight_ih_l0, ..., proj.weight, proj.bias).
using DoubleTensors = std::map<std::string, DoubleTensor>;

DoubleTensor toDouble(const FloatTensor &tensor);
FloatTensor toFloat(const DoubleTensor &tensor);
DoubleTensors toDouble(const std::map<std::string, FloatTensor> &tensors);

struct LossGradients {
  double loss = 0;         // mean cross-entropy over the T x B tokens
  DoubleTensors gradients; // d loss / d weight, for every weight
};

/// The LM of `recur-gen lstm-lm` (layer count read off the names) on
/// `tokens [T, B]`, its loss against `targets [T, B]`, and the loss's
/// gradient with respect to every weight. Throws std::invalid_argument
/// naming a missing weight or a tensor of the wrong shape or range.
LossGradients lstmLmLossGradients(const DoubleTensors &weights,
                                  const IdTensor &tokens,
                                  const IdTensor &targets);

/// recur.lstm_grad's results: the gradients of one LSTM layer's input,
/// weights (one for both biases) and initial state.
struct LstmGradients {
  DoubleTensor dInput, dWIh, dWHh, dBias, dH0, dC0;
};

/// recur.lstm_grad: backward through time of the layer `input [T, B, I]` ->
/// `y [T, B, H]` from the initial state `h0`, `c0` (zero when null), given
/// `dY` and the final state's gradients `dHN`, `dCN` (zero when null). The
/// gates are recomputed from x_t and the given y_{t-1}, as the op defines
/// them. With `lengths` ([B], each in 1..T), row b's steps from its length
/// on get no gradient and pass dh, dc through. Throws std::invalid_argument
/// naming a tensor of the wrong shape or a length out of range.
LstmGradients lstmGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                       const DoubleTensor &wHh, const DoubleTensor &bIh,
                       const DoubleTensor &bHh, const DoubleTensor &y,
                       const DoubleTensor &dY, const DoubleTensor *h0,
                       const DoubleTensor *c0, const DoubleTensor *dHN,
                       const DoubleTensor *dCN,
                       const IdTensor *lengths = nullptr);

/// recur.gru_grad's results.
struct GruGradients {
  DoubleTensor dInput, dWIh, dWHh, dBIh, dBHh, dH0;
};

/// recur.gru_grad: backward through time of the GRU layer `input [T, B, I]`
/// -> `y [T, B, H]` (PyTorch's gates r, z, n) from `h0` (zero when null),
/// given `dY` (zero when null) and `dHN` (zero when null); the gates are
/// recomputed from x_t and the given y_{t-1}. Null biases are zero. With
/// `lengths`, row b's steps from its length on get no gradient and pass dh
/// through. Throws std::invalid_argument naming a tensor of the wrong shape.
GruGradients gruGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                     const DoubleTensor &wHh, const DoubleTensor *bIh,
                     const DoubleTensor *bHh, const DoubleTensor &y,
                     const DoubleTensor *dY, const DoubleTensor *h0,
                     const DoubleTensor *dHN, const IdTensor *lengths);

/// recur.rnn_grad's results.
struct RnnGradients {
  DoubleTensor dInput, dWIh, dWHh, dBias, dH0;
};

/// recur.rnn_grad: backward through time of the Elman layer (tanh, or ReLU
/// with `relu`) `input [T, B, I]` -> `y [T, B, H]` from `h0`, given `dY`
/// and `dHN` (each zero when null), the nonlinearity's derivative read off
/// y; with `lengths` as lstmGrad's. Throws std::invalid_argument naming a
/// tensor of the wrong shape.
RnnGradients rnnGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                     const DoubleTensor &wHh, const DoubleTensor &y,
                     const DoubleTensor *dY, const DoubleTensor *h0,
                     const DoubleTensor *dHN, const IdTensor *lengths,
                     bool relu);

/// recur.linear_grad's results.
struct LinearGradients {
  DoubleTensor dInput, dWeight, dBias;
};

/// recur.linear_grad: given `dResult [..., N]`, the gradients of
/// `input [..., K] · weightᵀ (+ bias)` with respect to the input, the weight
/// `[N, K]` and the bias `[N]`.
LinearGradients linearGrad(const DoubleTensor &dResult,
                           const DoubleTensor &input,
                           const DoubleTensor &weight);

/// recur.embedding_grad: `dResult [d..., E]`'s rows summed into a `[rows,
/// E]` table at their ids `[d...]` (each checked to lie in [0, rows)).
DoubleTensor embeddingGrad(const DoubleTensor &dResult, const IdTensor &ids,
                           int64_t rows);

/// torch.nn.utils.clip_grad_norm_(parameters, maxNorm): the L2 norm of all
/// gradients together; where it exceeds `maxNorm` (> 0), every gradient is
/// scaled by maxNorm / (norm + 1e-6). Returns the norm before clipping.
double clipGradientNorm(DoubleTensors &gradients, double maxNorm);

/// weights -= learningRate * gradients, for every weight (torch.optim.SGD
/// without momentum or weight decay). A gradient without a weight, or of
/// another shape, is an error.
void sgdUpdate(DoubleTensors &weights, const DoubleTensors &gradients,
               double learningRate);

} // namespace recur::reference

#endif // RECUR_REFERENCE_TRAINING_H
