//===- ReferenceTest.cpp - The plain C++ reference of the recur ops -------===//
//
// Expected values are worked out by hand (or with scalar formulas written out
// here), independent of the reference's loops.
//
//===----------------------------------------------------------------------===//

#include "reference/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <stdexcept>

using namespace recur::reference;

namespace {

constexpr double kTolerance = 1e-6;

/// Runs `body`, expecting std::invalid_argument with exactly `message`.
template <typename Body>
void expectError(Body body, const std::string &message) {
  try {
    body();
    ADD_FAILURE() << "expected an error: " << message;
  } catch (const std::invalid_argument &error) {
    EXPECT_EQ(error.what(), message);
  }
}

TEST(ReferenceTest, EmbeddingGathersRows) {
  FloatTensor table({3, 2}, {0, 1, 10, 11, 20, 21});
  IdTensor ids({2, 2}, {2, 0, 1, 2});
  FloatTensor rows = embedding(table, ids);
  EXPECT_EQ(rows.shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(rows.data, (std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21}));
  expectError([&] { embedding(table, IdTensor({1}, {3})); },
              "'ids' element 0 is 3, outside [0, 3)");
}

TEST(ReferenceTest, LinearIsAffineOverTheLastDimension) {
  FloatTensor x({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  FloatTensor w({2, 3}, {1, 0, 0, 1, 1, 1});
  FloatTensor b({2}, {0.5, -1});
  FloatTensor y = linear(x, w, &b);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{1.5, 5, 4.5, 14}));
  EXPECT_EQ(linear(x, w).data, (std::vector<float>{1, 6, 4, 15}));
  expectError(
      [&] {
        linear(x, FloatTensor({2, 4}));
      },
      "'weight' expected shape [2, 3], got [2, 4]");
}

TEST(ReferenceTest, LogSoftmaxNormalizesEachRow) {
  // log_softmax([0, ln 3]) = [ln 1/4, ln 3/4]; large values must not overflow.
  FloatTensor x({2, 2}, {0, float(std::log(3.0)), 1000, 1000});
  FloatTensor y = logSoftmax(x);
  EXPECT_NEAR(y.data[0], std::log(0.25), kTolerance);
  EXPECT_NEAR(y.data[1], std::log(0.75), kTolerance);
  EXPECT_NEAR(y.data[2], std::log(0.5), kTolerance);
  EXPECT_NEAR(y.data[3], std::log(0.5), kTolerance);
}

TEST(ReferenceTest, CrossEntropyReductions) {
  // Uniform logits over 4 classes cost ln 4; a row [0, ln 3] with target 1
  // costs -ln 3/4.
  FloatTensor logits({2, 4},
                     {1, 1, 1, 1, 0, float(std::log(3.0)), -1e30f, -1e30f});
  IdTensor targets({2}, {2, 1});
  FloatTensor none = crossEntropy(logits, targets, Reduction::None);
  ASSERT_EQ(none.shape, (std::vector<int64_t>{2}));
  EXPECT_NEAR(none.data[0], std::log(4.0), kTolerance);
  EXPECT_NEAR(none.data[1], -std::log(0.75), kTolerance);
  FloatTensor sum = crossEntropy(logits, targets, Reduction::Sum);
  EXPECT_TRUE(sum.shape.empty());
  EXPECT_NEAR(sum.data[0], std::log(4.0) - std::log(0.75), kTolerance);
  EXPECT_NEAR(crossEntropy(logits, targets).data[0],
              (std::log(4.0) - std::log(0.75)) / 2, kTolerance);
  expectError(
      [&] {
        crossEntropy(logits, IdTensor({2}, {0, 4}));
      },
      "'targets' element 1 is 4, outside [0, 4)");
  expectError(
      [&] {
        crossEntropy(logits, IdTensor({3}, {0, 0, 0}));
      },
      "'targets' expected shape [2], got [3]");
}

/// An LSTM layer with H = 1 whose weights are zero and whose gate biases
/// (order i, f, g, o) are `bias`.
LstmResult biasOnlyLstm(std::vector<float> bias, float c0) {
  FloatTensor x({1, 1, 1}, {0});
  FloatTensor w({4, 1});
  FloatTensor b({4}, bias);
  FloatTensor zero({4});
  FloatTensor h0({1, 1}, {0}), c({1, 1}, {c0});
  return lstm(x, w, w, &b, &zero, &h0, &c);
}

TEST(ReferenceTest, LstmGateOrderIsInputForgetCellOutput) {
  // i = 1, f = 0, g = tanh(20) = 1, o = 1: c = 1, h = tanh(1).
  LstmResult write = biasOnlyLstm({40, -40, 20, 40}, /*c0=*/5);
  EXPECT_NEAR(write.cN.data[0], 1.0, 1e-6);
  EXPECT_NEAR(write.hN.data[0], std::tanh(1.0), 1e-6);
  // i = 0, f = 1, o = 1: the cell keeps c0.
  LstmResult keep = biasOnlyLstm({-40, 40, 20, 40}, /*c0=*/0.5);
  EXPECT_NEAR(keep.cN.data[0], 0.5, 1e-6);
  EXPECT_NEAR(keep.hN.data[0], std::tanh(0.5), 1e-6);
  // o = 0 hides the state.
  LstmResult hide = biasOnlyLstm({40, 40, 20, -40}, /*c0=*/0.5);
  EXPECT_NEAR(hide.hN.data[0], 0.0, 1e-6);
}

TEST(ReferenceTest, LstmMatchesScalarFormulasOverTwoSteps) {
  // I = H = B = 1, distinct weights per gate, two steps written out by hand.
  const double wi[4] = {0.5, -0.3, 0.8, 0.1}, wh[4] = {0.2, 0.4, -0.6, 0.7};
  const double bi[4] = {0.1, 0.2, 0.0, -0.1}, bh[4] = {0.05, -0.05, 0.1, 0.0};
  const double xs[2] = {1.0, -2.0};
  auto sigma = [](double v) { return 1 / (1 + std::exp(-v)); };
  double h = 0.25, c = -0.5, hs[2];
  for (int t = 0; t < 2; ++t) {
    auto pre = [&](int g) { return wi[g] * xs[t] + bi[g] + wh[g] * h + bh[g]; };
    double i = sigma(pre(0)), f = sigma(pre(1)), g = std::tanh(pre(2)),
           o = sigma(pre(3));
    c = f * c + i * g;
    h = o * std::tanh(c);
    hs[t] = h;
  }

  auto floats = [](const double *v, int n) {
    return std::vector<float>(v, v + n);
  };
  FloatTensor x({2, 1, 1}, floats(xs, 2));
  FloatTensor wIh({4, 1}, floats(wi, 4)), wHh({4, 1}, floats(wh, 4));
  FloatTensor bIh({4}, floats(bi, 4)), bHh({4}, floats(bh, 4));
  FloatTensor h0({1, 1}, {0.25}), c0({1, 1}, {-0.5});
  LstmResult result = lstm(x, wIh, wHh, &bIh, &bHh, &h0, &c0);
  ASSERT_EQ(result.y.shape, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_NEAR(result.y.data[0], hs[0], 1e-6);
  EXPECT_NEAR(result.y.data[1], hs[1], 1e-6);
  EXPECT_NEAR(result.hN.data[0], h, 1e-6);
  EXPECT_NEAR(result.cN.data[0], c, 1e-6);
}

TEST(ReferenceTest, LstmStateCarriesAcrossCalls) {
  // Running T = 3 at once equals T = 1 then T = 2 with the state passed on,
  // with I != H and B = 2.
  const int64_t batch = 2, in = 3, hidden = 2;
  auto ramp = [](std::vector<int64_t> shape, float scale) {
    FloatTensor t(shape);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = scale * std::sin(float(i) + scale);
    return t;
  };
  FloatTensor x = ramp({3, batch, in}, 0.9f);
  FloatTensor wIh = ramp({4 * hidden, in}, 0.5f),
              wHh = ramp({4 * hidden, hidden}, 0.7f);
  FloatTensor bIh = ramp({4 * hidden}, 0.3f), bHh = ramp({4 * hidden}, 0.2f);
  LstmResult whole = lstm(x, wIh, wHh, &bIh, &bHh);

  FloatTensor first({1, batch, in},
                    {x.data.begin(), x.data.begin() + batch * in});
  FloatTensor rest({2, batch, in}, {x.data.begin() + batch * in, x.data.end()});
  LstmResult a = lstm(first, wIh, wHh, &bIh, &bHh);
  LstmResult b = lstm(rest, wIh, wHh, &bIh, &bHh, &a.hN, &a.cN);
  for (int64_t i = 0; i < batch * hidden; ++i) {
    EXPECT_FLOAT_EQ(whole.hN.data[i], b.hN.data[i]);
    EXPECT_FLOAT_EQ(whole.cN.data[i], b.cN.data[i]);
    EXPECT_FLOAT_EQ(whole.y.data[i], a.y.data[i]);
  }
  expectError([&] { lstm(x, wIh, wHh, &bIh, &bHh, &a.cN, &x); },
              "'c0' expected shape [2, 2], got [3, 2, 3]");
}

TEST(ReferenceTest, ProjectedLstmMatchesScalarFormulasOverTwoSteps) {
  // proj_size: I = B = P = 1, H = 2; h = w_hr · (o * tanh(c)) is what the
  // next step's w_hh [4H, P] reads, and y and h_n hold it; c_n keeps H.
  const double wi[8] = {0.5, -0.3, 0.8, 0.1, 0.4, -0.2, 0.6, 0.3};
  const double wh[8] = {0.2, 0.4, -0.6, 0.7, -0.1, 0.5, 0.3, -0.4};
  const double wr[2] = {0.9, -0.7};
  const double xs[2] = {1.0, -2.0};
  auto sigma = [](double v) { return 1 / (1 + std::exp(-v)); };
  double h = 0.25, c[2] = {-0.5, 0.3}, hs[2];
  for (int t = 0; t < 2; ++t) {
    double projected = 0;
    for (int unit = 0; unit < 2; ++unit) {
      auto pre = [&](int gate) {
        int row = gate * 2 + unit;
        return wi[row] * xs[t] + wh[row] * h;
      };
      double i = sigma(pre(0)), f = sigma(pre(1)), g = std::tanh(pre(2)),
             o = sigma(pre(3));
      c[unit] = f * c[unit] + i * g;
      projected += wr[unit] * o * std::tanh(c[unit]);
    }
    h = hs[t] = projected;
  }

  auto floats = [](const double *v, int n) {
    return std::vector<float>(v, v + n);
  };
  FloatTensor x({2, 1, 1}, floats(xs, 2));
  FloatTensor wIh({8, 1}, floats(wi, 8)), wHh({8, 1}, floats(wh, 8));
  FloatTensor wHr({1, 2}, floats(wr, 2));
  FloatTensor h0({1, 1}, {0.25}), c0({1, 2}, {-0.5, 0.3});
  LstmResult result = lstm(x, wIh, wHh, nullptr, nullptr, &h0, &c0,
                           /*reverse=*/false, &wHr);
  ASSERT_EQ(result.y.shape, (std::vector<int64_t>{2, 1, 1}));
  ASSERT_EQ(result.cN.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR(result.y.data[0], hs[0], 1e-6);
  EXPECT_NEAR(result.y.data[1], hs[1], 1e-6);
  EXPECT_NEAR(result.hN.data[0], h, 1e-6);
  EXPECT_NEAR(result.cN.data[0], c[0], 1e-6);
  EXPECT_NEAR(result.cN.data[1], c[1], 1e-6);
}

TEST(ReferenceTest, ReverseLstmRunsTheFlippedSequence) {
  // A reversed layer over x equals a forward layer over x flipped in time,
  // with y flipped back; no biases equal zero biases.
  const int64_t steps = 3, batch = 2, in = 3, hidden = 2;
  auto ramp = [](std::vector<int64_t> shape, float scale) {
    FloatTensor t(shape);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = scale * std::sin(float(i) + scale);
    return t;
  };
  FloatTensor x = ramp({steps, batch, in}, 0.9f);
  FloatTensor wIh = ramp({4 * hidden, in}, 0.5f),
              wHh = ramp({4 * hidden, hidden}, 0.7f);
  FloatTensor zero({4 * hidden});
  FloatTensor flipped = x;
  for (int64_t t = 0; t < steps; ++t)
    std::copy_n(&x.data[(steps - 1 - t) * batch * in], batch * in,
                &flipped.data[t * batch * in]);
  LstmResult reversed = lstm(x, wIh, wHh, nullptr, nullptr, nullptr, nullptr,
                             /*reverse=*/true);
  LstmResult forward = lstm(flipped, wIh, wHh, &zero, &zero);
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t i = 0; i < batch * hidden; ++i)
      EXPECT_FLOAT_EQ(reversed.y.data[t * batch * hidden + i],
                      forward.y.data[(steps - 1 - t) * batch * hidden + i]);
  EXPECT_EQ(reversed.hN.data, forward.hN.data);
  EXPECT_EQ(reversed.cN.data, forward.cN.data);
  expectError([&] { lstm(x, wIh, wHh, &zero, nullptr); },
              "an LSTM takes both biases b_ih and b_hh or neither");
}

TEST(ReferenceTest, LstmLmChainsTheOpsByStateDictName) {
  std::map<std::string, FloatTensor> weights;
  weights["embedding.weight"] = FloatTensor({3, 1}, {0, 1, 2});
  for (const char *layer : {"_l0", "_l1"}) {
    weights[std::string("lstm.weight_ih") + layer] = FloatTensor({4, 1});
    weights[std::string("lstm.weight_hh") + layer] = FloatTensor({4, 1});
    weights[std::string("lstm.bias_ih") + layer] =
        FloatTensor({4}, {40, -40, 20, 40});
    weights[std::string("lstm.bias_hh") + layer] = FloatTensor({4});
  }
  weights["proj.weight"] = FloatTensor({2, 1}, {1, -1});
  weights["proj.bias"] = FloatTensor({2}, {0, 3});
  // Bias-only layers output tanh(1) whatever the input.
  FloatTensor logits = lstmLm(weights, IdTensor({1, 1}, {2}));
  ASSERT_EQ(logits.shape, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_NEAR(logits.data[0], std::tanh(1.0), 1e-6);
  EXPECT_NEAR(logits.data[1], 3 - std::tanh(1.0), 1e-6);

  weights.erase("lstm.bias_hh_l1");
  expectError(
      [&] {
        lstmLm(weights, IdTensor({1, 1}, {2}));
      },
      "missing weight 'lstm.bias_hh_l1'");
}
} // namespace
