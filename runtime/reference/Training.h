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
