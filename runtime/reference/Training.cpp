//===- Training.cpp - Reference of the LSTM LM's training step ------------===//

#include "reference/Training.h"
#include "reference/LstmCell.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace recur::reference {

DoubleTensor toDouble(const FloatTensor &tensor) {
  return DoubleTensor(tensor.shape, std::vector<double>(tensor.data.begin(),
                                                        tensor.data.end()));
}

FloatTensor toFloat(const DoubleTensor &tensor) {
  return FloatTensor(
      tensor.shape, std::vector<float>(tensor.data.begin(), tensor.data.end()));
}

DoubleTensors toDouble(const std::map<std::string, FloatTensor> &tensors) {
  DoubleTensors result;
  for (const auto &[name, tensor] : tensors)
    result.emplace(name, toDouble(tensor));
  return result;
}

namespace {

const DoubleTensor &weight(const DoubleTensors &weights,
                           const std::string &name) {
  auto found = weights.find(name);
  if (found == weights.end())
    throw std::invalid_argument("missing weight '" + name + "'");
  return found->second;
}

/// One LSTM layer's forward values that its backward needs.
struct LayerTrace {
  int64_t steps, batch, inputSize, hidden;
  std::vector<double> input; // [T, B, I]
  std::vector<double> gates; // [T, B, 4H]: i, f, g, o after activation
  std::vector<double> c, h;  // [T + 1, B, H]: the initial state first
};

/// The layer's steps from the initial state `h0`, `c0` ([B, H] each, zero
/// when null). With `y` ([T, B, H]), h_t is read from it instead of computed
/// (recur.lstm_grad recomputes the gates from the forward's y).
LayerTrace lstmForward(std::vector<double> input, int64_t steps, int64_t batch,
                       const DoubleTensor &wIh, const DoubleTensor &wHh,
                       const DoubleTensor &bIh, const DoubleTensor &bHh,
                       const DoubleTensor *h0 = nullptr,
                       const DoubleTensor *c0 = nullptr,
                       const DoubleTensor *y = nullptr,
                       const IdTensor *lengths = nullptr) {
  int64_t hidden = wHh.dim(1), inputSize = wIh.dim(1);
  LayerTrace trace{steps,
                   batch,
                   inputSize,
                   hidden,
                   std::move(input),
                   std::vector<double>(steps * batch * 4 * hidden),
                   std::vector<double>((steps + 1) * batch * hidden),
                   std::vector<double>((steps + 1) * batch * hidden)};
  if (h0)
    std::copy(h0->data.begin(), h0->data.end(), trace.h.begin());
  if (c0)
    std::copy(c0->data.begin(), c0->data.end(), trace.c.begin());
  for (int64_t t = 0; t < steps; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      int64_t row = t * batch + b;
      lstmCellStep(wIh.data.data(), wHh.data.data(), bIh.data.data(),
                   bHh.data.data(), inputSize, hidden, hidden,
                   &trace.input[row * inputSize], &trace.h[row * hidden],
                   &trace.c[row * hidden], &trace.gates[row * 4 * hidden],
                   &trace.c[(row + batch) * hidden],
                   &trace.h[(row + batch) * hidden]);
    }
    if (y)
      std::copy_n(&y->data[t * batch * hidden], batch * hidden,
                  &trace.h[(t + 1) * batch * hidden]);
    // Past its length a row keeps its state.
    for (int64_t b = 0; lengths && b < batch; ++b)
      if (t >= lengths->data[b]) {
        int64_t row = t * batch + b;
        std::copy_n(&trace.h[row * hidden], hidden,
                    &trace.h[(row + batch) * hidden]);
        std::copy_n(&trace.c[row * hidden], hidden,
                    &trace.c[(row + batch) * hidden]);
      }
  }
  return trace;
}

/// Backward through time of one layer: adds the weights' gradients and
/// returns d loss / d input [T, B, I], given d loss / d y `dy` [T, B, H].
/// `dhNext`, `dcNext` ([B, H]) hold the gradients of the final state on
/// entry (zero if they are empty) and those of the initial state on return.
/// Past row b's length (`lengths`), its steps add nothing and dh, dc pass.
std::vector<double>
lstmBackward(const LayerTrace &trace, const std::vector<double> &dy,
             const DoubleTensor &wIh, const DoubleTensor &wHh,
             DoubleTensor &dWIh, DoubleTensor &dWHh, DoubleTensor &dBIh,
             DoubleTensor &dBHh, std::vector<double> &dhNext,
             std::vector<double> &dcNext, const IdTensor *lengths = nullptr) {
  int64_t steps = trace.steps, batch = trace.batch, hidden = trace.hidden,
          inputSize = trace.inputSize;
  std::vector<double> dInput(steps * batch * inputSize);
  // d loss / d h and d c flowing back from step t + 1.
  dhNext.resize(batch * hidden);
  dcNext.resize(batch * hidden);
  std::vector<double> dGates(4 * hidden); // before activation
  for (int64_t t = steps - 1; t >= 0; --t)
    for (int64_t b = 0; b < batch; ++b) {
      if (lengths && t >= lengths->data[b])
        continue;
      int64_t row = t * batch + b;
      const double *gates = &trace.gates[row * 4 * hidden];
      const double *cPrev = &trace.c[row * hidden];
      const double *c = &trace.c[(row + batch) * hidden];
      const double *hPrev = &trace.h[row * hidden];
      const double *x = &trace.input[row * inputSize];
      for (int64_t j = 0; j < hidden; ++j) {
        double in = gates[j], forget = gates[hidden + j],
               cell = gates[2 * hidden + j], out = gates[3 * hidden + j];
        double tanhC = std::tanh(c[j]);
        double dh = dy[row * hidden + j] + dhNext[b * hidden + j];
        double dc = dh * out * (1 - tanhC * tanhC) + dcNext[b * hidden + j];
        dGates[j] = dc * cell * in * (1 - in);
        dGates[hidden + j] = dc * cPrev[j] * forget * (1 - forget);
        dGates[2 * hidden + j] = dc * in * (1 - cell * cell);
        dGates[3 * hidden + j] = dh * tanhC * out * (1 - out);
        dcNext[b * hidden + j] = dc * forget;
      }
      std::fill_n(&dhNext[b * hidden], hidden, 0.0);
      for (int64_t g = 0; g < 4 * hidden; ++g) {
        double d = dGates[g];
        dBIh.data[g] += d;
        dBHh.data[g] += d;
        for (int64_t k = 0; k < inputSize; ++k) {
          dWIh.data[g * inputSize + k] += d * x[k];
          dInput[row * inputSize + k] += d * wIh.data[g * inputSize + k];
        }
        for (int64_t k = 0; k < hidden; ++k) {
          dWHh.data[g * hidden + k] += d * hPrev[k];
          dhNext[b * hidden + k] += d * wHh.data[g * hidden + k];
        }
      }
    }
  return dInput;
}

} // namespace

LossGradients lstmLmLossGradients(const DoubleTensors &weights,
                                  const IdTensor &tokens,
                                  const IdTensor &targets) {
  if (tokens.shape.size() != 2)
    throw std::invalid_argument("'tokens' expected rank 2 [T, B], got shape " +
                                formatShape(tokens.shape));
  expectShape("targets", targets, tokens.shape);
  const DoubleTensor &table = weight(weights, "embedding.weight");
  const DoubleTensor &projection = weight(weights, "proj.weight");
  const DoubleTensor &projectionBias = weight(weights, "proj.bias");
  if (table.shape.size() != 2 || projection.shape.size() != 2)
    throw std::invalid_argument(
        "'embedding.weight' and 'proj.weight' must have rank 2, got " +
        formatShape(table.shape) + " and " + formatShape(projection.shape));
  int64_t steps = tokens.dim(0), batch = tokens.dim(1), rows = steps * batch;
  int64_t vocab = table.dim(0), width = table.dim(1);
  int64_t classes = projection.dim(0);
  expectShape("proj.bias", projectionBias, {classes});
  int64_t layers = 0;
  while (weights.count("lstm.weight_ih_l" + std::to_string(layers)))
    ++layers;
  if (layers == 0)
    throw std::invalid_argument("missing weight 'lstm.weight_ih_l0'");
  auto layerWeight = [&](const char *kind, int64_t layer) -> auto & {
    return weight(weights,
                  std::string("lstm.") + kind + "_l" + std::to_string(layer));
  };

  // Forward: embedding, the layers (each trace keeps its input), logits.
  std::vector<double> x(rows * width);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t id = checkedId("tokens", tokens, r, vocab);
    std::copy_n(&table.data[id * width], width, &x[r * width]);
  }
  std::vector<LayerTrace> traces;
  for (int64_t layer = 0; layer < layers; ++layer) {
    const DoubleTensor &wHh = layerWeight("weight_hh", layer);
    if (wHh.shape.size() != 2)
      throw std::invalid_argument("'lstm.weight_hh_l" + std::to_string(layer) +
                                  "' expected rank 2 [4H, H], got shape " +
                                  formatShape(wHh.shape));
    int64_t hidden = wHh.dim(1);
    int64_t inputSize = layer == 0 ? width : traces.back().hidden;
    std::string suffix = "_l" + std::to_string(layer);
    expectShape("lstm.weight_ih" + suffix, layerWeight("weight_ih", layer),
                {4 * hidden, inputSize});
    expectShape("lstm.weight_hh" + suffix, wHh, {4 * hidden, hidden});
    expectShape("lstm.bias_ih" + suffix, layerWeight("bias_ih", layer),
                {4 * hidden});
    expectShape("lstm.bias_hh" + suffix, layerWeight("bias_hh", layer),
                {4 * hidden});
    std::vector<double> input =
        layer == 0 ? std::move(x)
                   : std::vector<double>(traces.back().h.begin() +
                                             batch * traces.back().hidden,
                                         traces.back().h.end());
    traces.push_back(lstmForward(
        std::move(input), steps, batch, layerWeight("weight_ih", layer), wHh,
        layerWeight("bias_ih", layer), layerWeight("bias_hh", layer)));
  }
  const LayerTrace &top = traces.back();
  int64_t hidden = top.hidden;
  expectShape("proj.weight", projection, {classes, hidden});

  LossGradients result;
  for (const auto &[name, tensor] : weights)
    result.gradients.emplace(name, DoubleTensor(tensor.shape));
  DoubleTensor &dProjection = result.gradients.at("proj.weight");
  DoubleTensor &dProjectionBias = result.gradients.at("proj.bias");

  // Loss and its backward one token at a time (the logits of a whole batch
  // would not fit at the LM's size): d loss / d logits = (softmax -
  // one_hot(target)) / (T B).
  std::vector<double> dy(rows * hidden), logits(classes);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t target = checkedId("targets", targets, r, classes);
    const double *h = &top.h[(batch + r) * hidden];
    for (int64_t v = 0; v < classes; ++v) {
      double sum = projectionBias.data[v];
      for (int64_t k = 0; k < hidden; ++k)
        sum += projection.data[v * hidden + k] * h[k];
      logits[v] = sum;
    }
    double max = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (double logit : logits)
      total += std::exp(logit - max);
    double logSumExp = max + std::log(total);
    result.loss += (logSumExp - logits[target]) / double(rows);
    for (int64_t v = 0; v < classes; ++v) {
      double d = (std::exp(logits[v] - logSumExp) - (v == target ? 1 : 0)) /
                 double(rows);
      dProjectionBias.data[v] += d;
      for (int64_t k = 0; k < hidden; ++k) {
        dProjection.data[v * hidden + k] += d * h[k];
        dy[r * hidden + k] += d * projection.data[v * hidden + k];
      }
    }
  }

  // Backward through the layers, top first; then into the embedding rows.
  for (int64_t layer = layers - 1; layer >= 0; --layer) {
    std::string suffix = "_l" + std::to_string(layer);
    std::vector<double> dhNext, dcNext;
    dy = lstmBackward(traces[layer], dy, layerWeight("weight_ih", layer),
                      layerWeight("weight_hh", layer),
                      result.gradients.at("lstm.weight_ih" + suffix),
                      result.gradients.at("lstm.weight_hh" + suffix),
                      result.gradients.at("lstm.bias_ih" + suffix),
                      result.gradients.at("lstm.bias_hh" + suffix), dhNext,
                      dcNext);
  }
  DoubleTensor &dTable = result.gradients.at("embedding.weight");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = 0; e < width; ++e)
      dTable.data[tokens.data[r] * width + e] += dy[r * width + e];
  return result;
}

LstmGradients lstmGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                       const DoubleTensor &wHh, const DoubleTensor &bIh,
                       const DoubleTensor &bHh, const DoubleTensor &y,
                       const DoubleTensor &dY, const DoubleTensor *h0,
                       const DoubleTensor *c0, const DoubleTensor *dHN,
                       const DoubleTensor *dCN, const IdTensor *lengths) {
  if (input.shape.size() != 3 || wHh.shape.size() != 2)
    throw std::invalid_argument(
        "lstm_grad expects input [T, B, I] and w_hh [4H, H], got " +
        formatShape(input.shape) + " and " + formatShape(wHh.shape));
  int64_t steps = input.dim(0), batch = input.dim(1), inputSize = input.dim(2);
  int64_t hidden = wHh.dim(1);
  expectShape("w_ih", wIh, {4 * hidden, inputSize});
  expectShape("w_hh", wHh, {4 * hidden, hidden});
  expectShape("b_ih", bIh, {4 * hidden});
  expectShape("b_hh", bHh, {4 * hidden});
  expectShape("y", y, {steps, batch, hidden});
  expectShape("d_y", dY, {steps, batch, hidden});
  std::pair<const char *, const DoubleTensor *> states[] = {
      {"h0", h0}, {"c0", c0}, {"d_h_n", dHN}, {"d_c_n", dCN}};
  for (auto [name, state] : states)
    if (state)
      expectShape(name, *state, {batch, hidden});
  if (lengths) {
    expectShape("lengths", *lengths, {batch});
    for (int64_t b = 0; b < batch; ++b)
      if (lengths->data[b] < 1 || lengths->data[b] > steps)
        throw std::invalid_argument("lengths[" + std::to_string(b) + "] is " +
                                    std::to_string(lengths->data[b]) +
                                    ", outside [1, " + std::to_string(steps) +
                                    "]");
  }
  LayerTrace trace = lstmForward(input.data, steps, batch, wIh, wHh, bIh, bHh,
                                 h0, c0, &y, lengths);
  LstmGradients result{
      DoubleTensor(input.shape),     DoubleTensor(wIh.shape),
      DoubleTensor(wHh.shape),       DoubleTensor(bIh.shape),
      DoubleTensor({batch, hidden}), DoubleTensor({batch, hidden})};
  std::vector<double> dh = dHN ? dHN->data : std::vector<double>();
  std::vector<double> dc = dCN ? dCN->data : std::vector<double>();
  DoubleTensor dBHh(bHh.shape);
  result.dInput.data =
      lstmBackward(trace, dY.data, wIh, wHh, result.dWIh, result.dWHh,
                   result.dBias, dBHh, dh, dc, lengths);
  result.dH0.data = std::move(dh);
  result.dC0.data = std::move(dc);
  return result;
}

/// A recurrence's backward's optional operands, each checked if given:
/// `dY` [T, B, H], `h0` and `dHN` [B, H], `lengths` [B].
void expectStepShapes(const DoubleTensor *dY, const DoubleTensor *h0,
                      const DoubleTensor *dHN, const IdTensor *lengths,
                      int64_t steps, int64_t batch, int64_t hidden) {
  if (dY)
    expectShape("d_y", *dY, {steps, batch, hidden});
  for (auto [name, state] : {std::pair{"h0", h0}, std::pair{"d_h_n", dHN}})
    if (state)
      expectShape(name, *state, {batch, hidden});
  if (lengths)
    expectShape("lengths", *lengths, {batch});
}

GruGradients gruGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                     const DoubleTensor &wHh, const DoubleTensor *bIh,
                     const DoubleTensor *bHh, const DoubleTensor &y,
                     const DoubleTensor *dY, const DoubleTensor *h0,
                     const DoubleTensor *dHN, const IdTensor *lengths) {
  if (input.shape.size() != 3 || wHh.shape.size() != 2)
    throw std::invalid_argument(
        "gru_grad expects input [T, B, I] and w_hh [3H, H], got " +
        formatShape(input.shape) + " and " + formatShape(wHh.shape));
  int64_t steps = input.dim(0), batch = input.dim(1), size = input.dim(2);
  int64_t hidden = wHh.dim(1), gates = 3 * hidden;
  expectShape("w_ih", wIh, {gates, size});
  expectShape("w_hh", wHh, {gates, hidden});
  expectShape("y", y, {steps, batch, hidden});
  if (bIh)
    expectShape("b_ih", *bIh, {gates});
  if (bHh)
    expectShape("b_hh", *bHh, {gates});
  expectStepShapes(dY, h0, dHN, lengths, steps, batch, hidden);
  GruGradients result{DoubleTensor(input.shape), DoubleTensor(wIh.shape),
                      DoubleTensor(wHh.shape),   DoubleTensor({gates}),
                      DoubleTensor({gates}),     DoubleTensor({batch, hidden})};
  std::vector<double> dh =
      dHN ? dHN->data : std::vector<double>(batch * hidden);
  std::vector<double> gi(gates), gh(gates), dgi(gates), dgh(gates),
      hPrev(hidden), dhPrev(batch * hidden);
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t t = steps - 1; t >= 0; --t) {
    dhPrev = dh;
    for (int64_t b = 0; b < batch; ++b) {
      if (lengths && t >= lengths->data[b])
        continue;
      const double *x = &input.data[(t * batch + b) * size];
      for (int64_t j = 0; j < hidden; ++j)
        hPrev[j] = t > 0 ? y.data[((t - 1) * batch + b) * hidden + j]
                   : h0  ? h0->data[b * hidden + j]
                         : 0.0;
      for (int64_t g = 0; g < gates; ++g) {
        gi[g] = bIh ? bIh->data[g] : 0.0;
        gh[g] = bHh ? bHh->data[g] : 0.0;
        for (int64_t k = 0; k < size; ++k)
          gi[g] += wIh.data[g * size + k] * x[k];
        for (int64_t k = 0; k < hidden; ++k)
          gh[g] += wHh.data[g * hidden + k] * hPrev[k];
      }
      for (int64_t j = 0; j < hidden; ++j) {
        double r = sigmoid(gi[j] + gh[j]);
        double z = sigmoid(gi[hidden + j] + gh[hidden + j]);
        double n = std::tanh(gi[2 * hidden + j] + r * gh[2 * hidden + j]);
        double d = dh[b * hidden + j] +
                   (dY ? dY->data[(t * batch + b) * hidden + j] : 0.0);
        double dn = d * (1 - z) * (1 - n * n);
        double dz = d * (hPrev[j] - n) * z * (1 - z);
        double dr = dn * gh[2 * hidden + j] * r * (1 - r);
        dgi[j] = dgh[j] = dr;
        dgi[hidden + j] = dgh[hidden + j] = dz;
        dgi[2 * hidden + j] = dn;
        dgh[2 * hidden + j] = dn * r;
        dhPrev[b * hidden + j] = d * z;
      }
      for (int64_t g = 0; g < gates; ++g) {
        result.dBIh.data[g] += dgi[g];
        result.dBHh.data[g] += dgh[g];
        for (int64_t k = 0; k < size; ++k) {
          result.dWIh.data[g * size + k] += dgi[g] * x[k];
          result.dInput.data[(t * batch + b) * size + k] +=
              dgi[g] * wIh.data[g * size + k];
        }
        for (int64_t k = 0; k < hidden; ++k) {
          result.dWHh.data[g * hidden + k] += dgh[g] * hPrev[k];
          dhPrev[b * hidden + k] += dgh[g] * wHh.data[g * hidden + k];
        }
      }
    }
    dh = dhPrev;
  }
  result.dH0.data = std::move(dh);
  return result;
}

RnnGradients rnnGrad(const DoubleTensor &input, const DoubleTensor &wIh,
                     const DoubleTensor &wHh, const DoubleTensor &y,
                     const DoubleTensor *dY, const DoubleTensor *h0,
                     const DoubleTensor *dHN, const IdTensor *lengths,
                     bool relu) {
  if (input.shape.size() != 3 || wHh.shape.size() != 2)
    throw std::invalid_argument(
        "rnn_grad expects input [T, B, I] and w_hh [H, H], got " +
        formatShape(input.shape) + " and " + formatShape(wHh.shape));
  int64_t steps = input.dim(0), batch = input.dim(1), size = input.dim(2);
  int64_t hidden = wHh.dim(1);
  expectShape("w_ih", wIh, {hidden, size});
  expectShape("w_hh", wHh, {hidden, hidden});
  expectShape("y", y, {steps, batch, hidden});
  expectStepShapes(dY, h0, dHN, lengths, steps, batch, hidden);
  RnnGradients result{DoubleTensor(input.shape), DoubleTensor(wIh.shape),
                      DoubleTensor(wHh.shape), DoubleTensor({hidden}),
                      DoubleTensor({batch, hidden})};
  std::vector<double> dh =
      dHN ? dHN->data : std::vector<double>(batch * hidden);
  std::vector<double> da(hidden);
  for (int64_t t = steps - 1; t >= 0; --t) {
    std::vector<double> dhPrev = dh;
    for (int64_t b = 0; b < batch; ++b) {
      if (lengths && t >= lengths->data[b])
        continue;
      int64_t row = t * batch + b;
      for (int64_t j = 0; j < hidden; ++j) {
        double h = y.data[row * hidden + j];
        double d = dh[b * hidden + j] + (dY ? dY->data[row * hidden + j] : 0.0);
        da[j] = d * (relu ? (h > 0 ? 1.0 : 0.0) : 1 - h * h);
        dhPrev[b * hidden + j] = 0;
      }
      for (int64_t j = 0; j < hidden; ++j) {
        result.dBias.data[j] += da[j];
        for (int64_t k = 0; k < size; ++k) {
          result.dWIh.data[j * size + k] += da[j] * input.data[row * size + k];
          result.dInput.data[row * size + k] += da[j] * wIh.data[j * size + k];
        }
        for (int64_t k = 0; k < hidden; ++k) {
          double hPrev = t > 0 ? y.data[(row - batch) * hidden + k]
                         : h0  ? h0->data[b * hidden + k]
                               : 0.0;
          result.dWHh.data[j * hidden + k] += da[j] * hPrev;
          dhPrev[b * hidden + k] += da[j] * wHh.data[j * hidden + k];
        }
      }
    }
    dh = std::move(dhPrev);
  }
  result.dH0.data = std::move(dh);
  return result;
}

LinearGradients linearGrad(const DoubleTensor &dResult,
                           const DoubleTensor &input,
                           const DoubleTensor &weight) {
  if (weight.shape.size() != 2 || input.shape.empty())
    throw std::invalid_argument("linear_grad expects weight [N, K] and input "
                                "[..., K], got " +
                                formatShape(weight.shape) + " and " +
                                formatShape(input.shape));
  int64_t outputs = weight.dim(0), width = weight.dim(1);
  std::vector<int64_t> resultShape = input.shape;
  resultShape.back() = outputs;
  expectShape("input", input, [&] {
    std::vector<int64_t> shape = input.shape;
    shape.back() = width;
    return shape;
  }());
  expectShape("d_result", dResult, resultShape);
  int64_t rows = input.numElements() / width;
  LinearGradients result{DoubleTensor(input.shape), DoubleTensor(weight.shape),
                         DoubleTensor({outputs})};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < outputs; ++n) {
      double d = dResult.data[r * outputs + n];
      result.dBias.data[n] += d;
      for (int64_t k = 0; k < width; ++k) {
        result.dInput.data[r * width + k] += d * weight.data[n * width + k];
        result.dWeight.data[n * width + k] += d * input.data[r * width + k];
      }
    }
  return result;
}

DoubleTensor embeddingGrad(const DoubleTensor &dResult, const IdTensor &ids,
                           int64_t rows) {
  std::vector<int64_t> shape = ids.shape;
  int64_t width = dResult.shape.empty() ? 0 : dResult.shape.back();
  shape.push_back(width);
  expectShape("d_result", dResult, shape);
  DoubleTensor table({rows, width});
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    int64_t id = checkedId("ids", ids, p, rows);
    for (int64_t e = 0; e < width; ++e)
      table.data[id * width + e] += dResult.data[p * width + e];
  }
  return table;
}

double clipGradientNorm(DoubleTensors &gradients, double maxNorm) {
  double squares = 0;
  for (const auto &[name, gradient] : gradients)
    for (double value : gradient.data)
      squares += value * value;
  double norm = std::sqrt(squares);
  // clip_grad_norm_'s coefficient, with its 1e-6, applied only below 1.
  double scale = maxNorm / (norm + 1e-6);
  if (maxNorm > 0 && scale < 1)
    for (auto &[name, gradient] : gradients)
      for (double &value : gradient.data)
        value *= scale;
  return norm;
}

void sgdUpdate(DoubleTensors &weights, const DoubleTensors &gradients,
               double learningRate) {
  for (const auto &[name, gradient] : gradients) {
    auto found = weights.find(name);
    if (found == weights.end())
      throw std::invalid_argument("gradient of '" + name +
                                  "', which is not a weight");
    expectShape("gradient of " + name, gradient, found->second.shape);
    for (size_t i = 0; i < gradient.data.size(); ++i)
      found->second.data[i] -= learningRate * gradient.data[i];
  }
}

} // namespace recur::reference
