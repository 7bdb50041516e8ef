//===- ReferenceTrainingTest.cpp - the training step's reference ----------===//
//
// The hand-written backward against central finite differences of its own
// double-precision loss (every weight element), the loss against the float
// forward reference, and clip_grad_norm_ and SGD semantics.
//
//===----------------------------------------------------------------------===//

#include "reference/Training.h"

#include "gmock/gmock.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

using namespace recur::reference;
using ::testing::HasSubstr;

namespace {

struct LmShape {
  int64_t vocab, embed, hidden, layers, steps, batch;
};

void PrintTo(const LmShape &shape, std::ostream *os) {
  *os << "V=" << shape.vocab << " E=" << shape.embed << " H=" << shape.hidden
      << " L=" << shape.layers << " T=" << shape.steps << " B=" << shape.batch;
}

DoubleTensor randomTensor(std::vector<int64_t> shape, std::mt19937_64 &rng,
                          double bound) {
  DoubleTensor tensor(std::move(shape));
  std::uniform_real_distribution<double> uniform(-bound, bound);
  for (double &value : tensor.data)
    value = uniform(rng);
  return tensor;
}

IdTensor randomIds(std::vector<int64_t> shape, int64_t bound,
                   std::mt19937_64 &rng) {
  IdTensor ids(std::move(shape));
  std::uniform_int_distribution<int64_t> uniform(0, bound - 1);
  for (int64_t &id : ids.data)
    id = uniform(rng);
  return ids;
}

/// Weights large enough that the gates leave their linear range.
DoubleTensors randomLm(const LmShape &shape, std::mt19937_64 &rng) {
  DoubleTensors weights;
  weights["embedding.weight"] =
      randomTensor({shape.vocab, shape.embed}, rng, 1.0);
  for (int64_t layer = 0; layer < shape.layers; ++layer) {
    std::string suffix = "_l" + std::to_string(layer);
    int64_t input = layer == 0 ? shape.embed : shape.hidden;
    weights["lstm.weight_ih" + suffix] =
        randomTensor({4 * shape.hidden, input}, rng, 0.8);
    weights["lstm.weight_hh" + suffix] =
        randomTensor({4 * shape.hidden, shape.hidden}, rng, 0.8);
    weights["lstm.bias_ih" + suffix] =
        randomTensor({4 * shape.hidden}, rng, 0.5);
    weights["lstm.bias_hh" + suffix] =
        randomTensor({4 * shape.hidden}, rng, 0.5);
  }
  weights["proj.weight"] = randomTensor({shape.vocab, shape.hidden}, rng, 1.0);
  weights["proj.bias"] = randomTensor({shape.vocab}, rng, 0.5);
  return weights;
}

class ReferenceTrainingTest : public ::testing::TestWithParam<LmShape> {};

// Every element of every weight: (loss(w + e) - loss(w - e)) / 2e, whose
// error is O(e^2) plus rounding, about 1e-9 here.
TEST_P(ReferenceTrainingTest, GradientsMatchFiniteDifferences) {
  const LmShape shape = GetParam();
  std::mt19937_64 rng(shape.vocab * 131 + shape.layers);
  DoubleTensors weights = randomLm(shape, rng);
  IdTensor tokens = randomIds({shape.steps, shape.batch}, shape.vocab, rng);
  IdTensor targets = randomIds({shape.steps, shape.batch}, shape.vocab, rng);
  LossGradients analytic = lstmLmLossGradients(weights, tokens, targets);
  EXPECT_GT(analytic.loss, 0);
  ASSERT_EQ(analytic.gradients.size(), weights.size());
  constexpr double kStep = 1e-5;
  for (auto &[name, tensor] : weights) {
    const DoubleTensor &gradient = analytic.gradients.at(name);
    ASSERT_EQ(gradient.shape, tensor.shape) << name;
    for (size_t i = 0; i < tensor.data.size(); ++i) {
      double saved = tensor.data[i];
      tensor.data[i] = saved + kStep;
      double above = lstmLmLossGradients(weights, tokens, targets).loss;
      tensor.data[i] = saved - kStep;
      double below = lstmLmLossGradients(weights, tokens, targets).loss;
      tensor.data[i] = saved;
      double numeric = (above - below) / (2 * kStep);
      EXPECT_NEAR(gradient.data[i], numeric, 1e-8 * (1 + std::abs(numeric)))
          << name << " element " << i;
    }
  }
}

// The same loss as the float reference's forward and cross entropy.
TEST_P(ReferenceTrainingTest, LossIsTheForwardReferencesCrossEntropy) {
  const LmShape shape = GetParam();
  std::mt19937_64 rng(7);
  DoubleTensors weights = randomLm(shape, rng);
  std::map<std::string, FloatTensor> floats;
  for (auto &[name, tensor] : weights) {
    floats[name] = toFloat(tensor);
    tensor = toDouble(floats[name]); // both start from the same values
  }
  IdTensor tokens = randomIds({shape.steps, shape.batch}, shape.vocab, rng);
  IdTensor targets = randomIds({shape.steps, shape.batch}, shape.vocab, rng);
  double loss = lstmLmLossGradients(weights, tokens, targets).loss;
  FloatTensor forward = crossEntropy(lstmLm(floats, tokens), targets);
  EXPECT_NEAR(loss, forward.data[0], 1e-5 * (1 + loss));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReferenceTrainingTest,
    ::testing::Values(LmShape{7, 3, 4, 1, 1, 1},  // T = B = 1
                      LmShape{11, 5, 3, 2, 3, 2}, // I != H
                      LmShape{6, 2, 5, 3, 4, 1},  // B = 1, 3 layers
                      LmShape{5, 4, 2, 4, 2, 3}), // 4 layers
    [](const ::testing::TestParamInfo<LmShape> &info) {
      const LmShape &s = info.param;
      return "v" + std::to_string(s.vocab) + "_h" + std::to_string(s.hidden) +
             "_l" + std::to_string(s.layers) + "_t" + std::to_string(s.steps) +
             "_b" + std::to_string(s.batch);
    });

TEST(ReferenceTraining, ClipScalesTheGlobalNormAsClipGradNorm) {
  DoubleTensors gradients;
  gradients["a"] = DoubleTensor({2}, {3, 0});
  gradients["b"] = DoubleTensor({1, 1}, {4});
  // Norm 5 above 1: every gradient times 1 / (5 + 1e-6).
  EXPECT_DOUBLE_EQ(clipGradientNorm(gradients, 1.0), 5.0);
  double scale = 1.0 / (5.0 + 1e-6);
  EXPECT_DOUBLE_EQ(gradients["a"].data[0], 3 * scale);
  EXPECT_DOUBLE_EQ(gradients["b"].data[0], 4 * scale);
  // Below the bound, or with no bound, nothing changes.
  DoubleTensors small = {{"a", DoubleTensor({1}, {0.5})}};
  EXPECT_DOUBLE_EQ(clipGradientNorm(small, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(small["a"].data[0], 0.5);
  DoubleTensors unbounded = {{"a", DoubleTensor({1}, {50})}};
  EXPECT_DOUBLE_EQ(clipGradientNorm(unbounded, 0), 50);
  EXPECT_DOUBLE_EQ(unbounded["a"].data[0], 50);
}

TEST(ReferenceTraining, SgdStepsAgainstTheGradient) {
  DoubleTensors weights = {{"w", DoubleTensor({2}, {1, -2})}};
  sgdUpdate(weights, {{"w", DoubleTensor({2}, {0.5, -1})}}, 0.1);
  EXPECT_DOUBLE_EQ(weights["w"].data[0], 0.95);
  EXPECT_DOUBLE_EQ(weights["w"].data[1], -1.9);
  try {
    sgdUpdate(weights, {{"v", DoubleTensor({1}, {1})}}, 0.1);
    FAIL() << "a gradient without a weight was accepted";
  } catch (const std::invalid_argument &error) {
    EXPECT_THAT(error.what(),
                HasSubstr("gradient of 'v', which is not a weight"));
  }
}

/// Every element of every tensor `analytic` names against the central
/// finite difference (loss(v + e) - loss(v - e)) / 2e of `loss` at `values`.
void expectFiniteDifferences(
    const std::map<std::string, DoubleTensor> &values,
    const std::map<std::string, const DoubleTensor *> &analytic,
    const std::function<double(const std::map<std::string, DoubleTensor> &)>
        &loss) {
  const double step = 1e-5;
  for (auto &[name, gradient] : analytic) {
    ASSERT_EQ(gradient->shape, values.at(name).shape) << name;
    for (size_t i = 0; i < gradient->data.size(); ++i) {
      auto shifted = values;
      shifted.at(name).data[i] += step;
      double up = loss(shifted);
      shifted.at(name).data[i] -= 2 * step;
      double down = loss(shifted);
      EXPECT_NEAR(gradient->data[i], (up - down) / (2 * step), 1e-7)
          << name << " element " << i;
    }
  }
}

/// One LSTM layer in double precision, written out here (independent of the
/// reference's trace): y [T, B, H], then h_n and c_n appended. Row b runs
/// its first lengths[b] steps (all if `lengths` is empty): past them its y
/// is zero and its state stays.
std::vector<DoubleTensor>
lstmLayer(const DoubleTensor &x, const DoubleTensor &wIh,
          const DoubleTensor &wHh, const DoubleTensor &bIh,
          const DoubleTensor &bHh, DoubleTensor h, DoubleTensor c,
          const std::vector<int64_t> &lengths) {
  int64_t steps = x.dim(0), batch = x.dim(1), size = x.dim(2),
          hidden = wHh.dim(1);
  DoubleTensor y({steps, batch, hidden});
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t t = 0; t < steps; ++t) {
    DoubleTensor next = h, nextC = c;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hidden && (lengths.empty() || t < lengths[b]);
           ++j) {
        double gate[4];
        for (int64_t g = 0; g < 4; ++g) {
          int64_t row = g * hidden + j;
          double sum = bIh.data[row] + bHh.data[row];
          for (int64_t k = 0; k < size; ++k)
            sum +=
                wIh.data[row * size + k] * x.data[(t * batch + b) * size + k];
          for (int64_t k = 0; k < hidden; ++k)
            sum += wHh.data[row * hidden + k] * h.data[b * hidden + k];
          gate[g] = g == 2 ? std::tanh(sum) : sigmoid(sum);
        }
        double cell = gate[1] * c.data[b * hidden + j] + gate[0] * gate[2];
        nextC.data[b * hidden + j] = cell;
        next.data[b * hidden + j] = gate[3] * std::tanh(cell);
        y.data[(t * batch + b) * hidden + j] = next.data[b * hidden + j];
      }
    h = std::move(next);
    c = std::move(nextC);
  }
  return {y, h, c};
}

// recur.lstm_grad's reference, with an initial state and gradients flowing in
// through y, h_n and c_n: L = <y, R_y> + <h_n, R_h> + <c_n, R_c> for random
// R, whose gradient it is given d_y = R_y, d_h_n = R_h, d_c_n = R_c; every
// element of the input, the initial state and the weights against central
// finite differences; with and without each row's length (1 and T among
// them).
class LstmGradTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(LstmGradTest, MatchesFiniteDifferences) {
  const std::vector<int64_t> &lengths = GetParam();
  std::mt19937_64 rng(7);
  int64_t steps = 3, batch = 2, size = 3, hidden = 4;
  std::map<std::string, DoubleTensor> values = {
      {"input", randomTensor({steps, batch, size}, rng, 1.0)},
      {"w_ih", randomTensor({4 * hidden, size}, rng, 0.8)},
      {"w_hh", randomTensor({4 * hidden, hidden}, rng, 0.8)},
      {"b_ih", randomTensor({4 * hidden}, rng, 0.5)},
      {"b_hh", randomTensor({4 * hidden}, rng, 0.5)},
      {"h0", randomTensor({batch, hidden}, rng, 1.0)},
      {"c0", randomTensor({batch, hidden}, rng, 1.0)}};
  DoubleTensor rY = randomTensor({steps, batch, hidden}, rng, 1.0),
               rH = randomTensor({batch, hidden}, rng, 1.0),
               rC = randomTensor({batch, hidden}, rng, 1.0);
  auto forward = [&](const std::map<std::string, DoubleTensor> &v) {
    return lstmLayer(v.at("input"), v.at("w_ih"), v.at("w_hh"), v.at("b_ih"),
                     v.at("b_hh"), v.at("h0"), v.at("c0"), lengths);
  };
  auto loss = [&](const std::map<std::string, DoubleTensor> &v) {
    std::vector<DoubleTensor> out = forward(v);
    double sum = 0;
    const DoubleTensor *weights[] = {&rY, &rH, &rC};
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < out[k].data.size(); ++i)
        sum += out[k].data[i] * weights[k]->data[i];
    return sum;
  };
  DoubleTensor y = forward(values)[0];
  IdTensor lengthTensor(
      {batch}, lengths.empty() ? std::vector<int64_t>(batch, steps) : lengths);
  LstmGradients gradients = lstmGrad(
      values.at("input"), values.at("w_ih"), values.at("w_hh"),
      values.at("b_ih"), values.at("b_hh"), y, rY, &values.at("h0"),
      &values.at("c0"), &rH, &rC, lengths.empty() ? nullptr : &lengthTensor);
  std::map<std::string, const DoubleTensor *> analytic = {
      {"input", &gradients.dInput}, {"w_ih", &gradients.dWIh},
      {"w_hh", &gradients.dWHh},    {"b_ih", &gradients.dBias},
      {"b_hh", &gradients.dBias},   {"h0", &gradients.dH0},
      {"c0", &gradients.dC0}};
  expectFiniteDifferences(values, analytic, loss);
}

INSTANTIATE_TEST_SUITE_P(Lengths, LstmGradTest,
                         ::testing::Values(std::vector<int64_t>{},
                                           std::vector<int64_t>{3, 1},
                                           std::vector<int64_t>{2, 3}));

/// One GRU layer in double precision, written out here: y [T, B, H], then
/// h_n; row b runs its first lengths[b] steps (all if `lengths` is empty).
std::vector<DoubleTensor> gruLayer(const std::map<std::string, DoubleTensor> &v,
                                   const std::vector<int64_t> &lengths) {
  const DoubleTensor &x = v.at("input"), &wIh = v.at("w_ih"),
                     &wHh = v.at("w_hh"), &bIh = v.at("b_ih"),
                     &bHh = v.at("b_hh");
  int64_t steps = x.dim(0), batch = x.dim(1), size = x.dim(2),
          hidden = wHh.dim(1);
  DoubleTensor y({steps, batch, hidden}), h = v.at("h0");
  auto sigmoid = [](double u) { return 1 / (1 + std::exp(-u)); };
  for (int64_t t = 0; t < steps; ++t) {
    DoubleTensor next = h;
    for (int64_t b = 0; b < batch; ++b) {
      if (!lengths.empty() && t >= lengths[b])
        continue;
      auto product = [&](int64_t row) {
        double gi = bIh.data[row], gh = bHh.data[row];
        for (int64_t k = 0; k < size; ++k)
          gi += wIh.data[row * size + k] * x.data[(t * batch + b) * size + k];
        for (int64_t k = 0; k < hidden; ++k)
          gh += wHh.data[row * hidden + k] * h.data[b * hidden + k];
        return std::pair{gi, gh};
      };
      for (int64_t j = 0; j < hidden; ++j) {
        auto [ri, rh] = product(j);
        auto [zi, zh] = product(hidden + j);
        auto [ni, nh] = product(2 * hidden + j);
        double r = sigmoid(ri + rh), z = sigmoid(zi + zh);
        double n = std::tanh(ni + r * nh);
        next.data[b * hidden + j] = (1 - z) * n + z * h.data[b * hidden + j];
        y.data[(t * batch + b) * hidden + j] = next.data[b * hidden + j];
      }
    }
    h = std::move(next);
  }
  return {y, h};
}

// recur.gru_grad's reference: L = <y, R_y> + <h_n, R_h>, every element of the
// input, h0, the weights and both biases against central finite
// differences, with and without lengths.
class GruGradTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(GruGradTest, MatchesFiniteDifferences) {
  const std::vector<int64_t> &lengths = GetParam();
  std::mt19937_64 rng(11);
  int64_t steps = 3, batch = 2, size = 3, hidden = 4;
  std::map<std::string, DoubleTensor> values = {
      {"input", randomTensor({steps, batch, size}, rng, 1.0)},
      {"w_ih", randomTensor({3 * hidden, size}, rng, 0.8)},
      {"w_hh", randomTensor({3 * hidden, hidden}, rng, 0.8)},
      {"b_ih", randomTensor({3 * hidden}, rng, 0.5)},
      {"b_hh", randomTensor({3 * hidden}, rng, 0.5)},
      {"h0", randomTensor({batch, hidden}, rng, 1.0)}};
  DoubleTensor rY = randomTensor({steps, batch, hidden}, rng, 1.0),
               rH = randomTensor({batch, hidden}, rng, 1.0);
  auto loss = [&](const std::map<std::string, DoubleTensor> &v) {
    std::vector<DoubleTensor> out = gruLayer(v, lengths);
    double sum = 0;
    for (size_t i = 0; i < rY.data.size(); ++i)
      sum += out[0].data[i] * rY.data[i];
    for (size_t i = 0; i < rH.data.size(); ++i)
      sum += out[1].data[i] * rH.data[i];
    return sum;
  };
  IdTensor lengthTensor(
      {batch}, lengths.empty() ? std::vector<int64_t>(batch, steps) : lengths);
  GruGradients gradients = gruGrad(
      values.at("input"), values.at("w_ih"), values.at("w_hh"),
      &values.at("b_ih"), &values.at("b_hh"), gruLayer(values, lengths)[0], &rY,
      &values.at("h0"), &rH, lengths.empty() ? nullptr : &lengthTensor);
  std::map<std::string, const DoubleTensor *> analytic = {
      {"input", &gradients.dInput}, {"w_ih", &gradients.dWIh},
      {"w_hh", &gradients.dWHh},    {"b_ih", &gradients.dBIh},
      {"b_hh", &gradients.dBHh},    {"h0", &gradients.dH0}};
  expectFiniteDifferences(values, analytic, loss);
}

INSTANTIATE_TEST_SUITE_P(Lengths, GruGradTest,
                         ::testing::Values(std::vector<int64_t>{},
                                           std::vector<int64_t>{3, 1},
                                           std::vector<int64_t>{2, 3}));

// recur.rnn_grad's reference, tanh and ReLU, with and without lengths: L =
// <y, R_y> + <h_n, R_h>, every element of the input, h0 and the weights
// against central finite differences (the bias through b_ih).
class RnnGradTest
    : public ::testing::TestWithParam<std::pair<bool, std::vector<int64_t>>> {};

TEST_P(RnnGradTest, MatchesFiniteDifferences) {
  auto [relu, lengths] = GetParam();
  std::mt19937_64 rng(13);
  int64_t steps = 3, batch = 2, size = 3, hidden = 4;
  std::map<std::string, DoubleTensor> values = {
      {"input", randomTensor({steps, batch, size}, rng, 1.0)},
      {"w_ih", randomTensor({hidden, size}, rng, 0.8)},
      {"w_hh", randomTensor({hidden, hidden}, rng, 0.8)},
      {"b_ih", randomTensor({hidden}, rng, 0.5)},
      {"h0", randomTensor({batch, hidden}, rng, 1.0)}};
  DoubleTensor rY = randomTensor({steps, batch, hidden}, rng, 1.0),
               rH = randomTensor({batch, hidden}, rng, 1.0);
  // The layer, written out: h_t = act(x_t · w_ihᵀ + b + h_{t-1} · w_hhᵀ).
  auto forward = [&](const std::map<std::string, DoubleTensor> &v) {
    const DoubleTensor &x = v.at("input"), &wIh = v.at("w_ih"),
                       &wHh = v.at("w_hh"), &bias = v.at("b_ih");
    DoubleTensor y({steps, batch, hidden}), h = v.at("h0");
    for (int64_t t = 0; t < steps; ++t) {
      DoubleTensor next = h;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hidden && (lengths.empty() || t < lengths[b]);
             ++j) {
          double a = bias.data[j];
          for (int64_t k = 0; k < size; ++k)
            a += wIh.data[j * size + k] * x.data[(t * batch + b) * size + k];
          for (int64_t k = 0; k < hidden; ++k)
            a += wHh.data[j * hidden + k] * h.data[b * hidden + k];
          next.data[b * hidden + j] = relu ? std::max(a, 0.0) : std::tanh(a);
          y.data[(t * batch + b) * hidden + j] = next.data[b * hidden + j];
        }
      h = std::move(next);
    }
    return std::pair{y, h};
  };
  auto loss = [&](const std::map<std::string, DoubleTensor> &v) {
    auto [y, h] = forward(v);
    double sum = 0;
    for (size_t i = 0; i < y.data.size(); ++i)
      sum += y.data[i] * rY.data[i];
    for (size_t i = 0; i < h.data.size(); ++i)
      sum += h.data[i] * rH.data[i];
    return sum;
  };
  IdTensor lengthTensor(
      {batch}, lengths.empty() ? std::vector<int64_t>(batch, steps) : lengths);
  RnnGradients gradients =
      rnnGrad(values.at("input"), values.at("w_ih"), values.at("w_hh"),
              forward(values).first, &rY, &values.at("h0"), &rH,
              lengths.empty() ? nullptr : &lengthTensor, relu);
  expectFiniteDifferences(values,
                          {{"input", &gradients.dInput},
                           {"w_ih", &gradients.dWIh},
                           {"w_hh", &gradients.dWHh},
                           {"b_ih", &gradients.dBias},
                           {"h0", &gradients.dH0}},
                          loss);
}

INSTANTIATE_TEST_SUITE_P(
    Cells, RnnGradTest,
    ::testing::Values(std::pair{false, std::vector<int64_t>{}},
                      std::pair{true, std::vector<int64_t>{}},
                      std::pair{false, std::vector<int64_t>{3, 1}},
                      std::pair{true, std::vector<int64_t>{2, 3}}));

TEST(ReferenceTraining, BadTargetsAndWeightsAreNamed) {
  std::mt19937_64 rng(3);
  DoubleTensors weights = randomLm({5, 2, 3, 1, 2, 2}, rng);
  IdTensor tokens({2, 2}, {0, 1, 2, 3});
  auto message = [&](const DoubleTensors &w, const IdTensor &targets) {
    try {
      lstmLmLossGradients(w, tokens, targets);
    } catch (const std::invalid_argument &error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message(weights, IdTensor({2, 2}, {0, 1, 5, 0})),
              HasSubstr("'targets' element 2 is 5, outside [0, 5)"));
  EXPECT_THAT(message(weights, IdTensor({4}, {0, 1, 2, 3})),
              HasSubstr("'targets' expected shape [2, 2], got [4]"));
  DoubleTensors missing = weights;
  missing.erase("lstm.bias_hh_l0");
  EXPECT_THAT(message(missing, IdTensor({2, 2}, {0, 0, 0, 0})),
              HasSubstr("missing weight 'lstm.bias_hh_l0'"));
  DoubleTensors wrong = weights;
  wrong["proj.weight"] = DoubleTensor({5, 4});
  EXPECT_THAT(message(wrong, IdTensor({2, 2}, {0, 0, 0, 0})),
              HasSubstr("'proj.weight' expected shape [5, 3], got [5, 4]"));
}

} // namespace
