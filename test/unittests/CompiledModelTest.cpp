//===- CompiledModelTest.cpp - compiled models vs the reference -----------===//
//
// Numerics of the whole CPU path (recur-lower-to-cpu, recur-compile,
// librecur-runtime) against the reference interpreter, on shapes chosen to
// catch indexing mistakes: odd sizes, B = 1, T = 1, I != H, 1 to 4 layers,
// with and without initial states, static and dynamic T/B.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

#include "recur/Gen/ModelGen.h"

#include "mlir/IR/MLIRContext.h"

#include <sstream>

using namespace recur::testing;
using namespace mlir::recur;

namespace {

struct LmCase {
  int64_t vocab, embed, hidden, layers, seq, batch;
  bool staticShapes;
};

std::string describe(const LmCase &c) {
  std::ostringstream name;
  name << "lm_v" << c.vocab << "_e" << c.embed << "_h" << c.hidden << "_l"
       << c.layers << "_t" << c.seq << "_b" << c.batch
       << (c.staticShapes ? "_static" : "_dynamic");
  return name.str();
}

class CompiledLmTest : public ::testing::TestWithParam<LmCase> {};

TEST_P(CompiledLmTest, MatchesReference) {
  const LmCase &c = GetParam();
  mlir::MLIRContext context;
  LstmLmConfig config;
  config.vocab = c.vocab;
  config.embed = c.embed;
  config.hidden = c.hidden;
  config.layers = c.layers;
  if (c.staticShapes) {
    config.seq = c.seq;
    config.batch = c.batch;
  }
  auto module = buildLstmLm(context, config);
  std::string path = compileToLibrary(*module, describe(c));
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(c.vocab * 1000 + c.hidden);
  model.bindRandomWeights(rng);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomIds({c.seq, c.batch}, c.vocab, rng));
  model.runAndCompare(std::move(inputs));
}

// Hand-picked corners plus a seeded draw of odd sizes.
std::vector<LmCase> lmCases() {
  std::vector<LmCase> cases = {
      {11, 5, 7, 1, 1, 1, false},  // T = 1, B = 1
      {13, 6, 3, 2, 4, 1, false},  // B = 1, I != H
      {17, 4, 9, 3, 1, 5, true},   // T = 1, static
      {10, 8, 8, 4, 3, 2, false},  // 4 layers, I == H
      {31, 7, 33, 2, 6, 3, false}, // H above the vector width
  };
  std::mt19937_64 rng(2026);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 4; ++i)
    cases.push_back({pick(2, 40), pick(1, 20), pick(1, 40), pick(1, 4),
                     pick(1, 9), pick(1, 6), i % 2 == 0});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, CompiledLmTest, ::testing::ValuesIn(lmCases()),
                         [](const auto &info) { return describe(info.param); });

TEST(CompiledLstmStackTest, MatchesReferenceWithFloatInputs) {
  mlir::MLIRContext context;
  LstmStackConfig config;
  config.input = 5;
  config.hidden = 6;
  config.layers = 3;
  auto module = buildLstmStack(context, config);
  std::string path = compileToLibrary(*module, "lstm_stack");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(7);
  model.bindRandomWeights(rng);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomFloats({4, 3, 5}, rng, 1.0f));
  model.runAndCompare(std::move(inputs));
}

// Initial states as inputs, and all three LSTM results as outputs: the
// runtime's multi-result ABI and the [B, H] batch-major dims.
constexpr const char *kLstmWithState = R"mlir(
func.func @forward(%x: tensor<?x?x3xf32> {recur.input = "x"},
                   %h0: tensor<?x5xf32> {recur.input = "h0"},
                   %c0: tensor<?x5xf32> {recur.input = "c0"},
                   %wih: tensor<20x3xf32> {recur.weight = "weight_ih_l0"},
                   %whh: tensor<20x5xf32> {recur.weight = "weight_hh_l0"},
                   %bih: tensor<20xf32> {recur.weight = "bias_ih_l0"},
                   %bhh: tensor<20xf32> {recur.weight = "bias_hh_l0"})
    -> (tensor<?x?x5xf32> {recur.output = "y"}, tensor<?x5xf32> {recur.output = "h_n"},
        tensor<?x5xf32> {recur.output = "c_n"}) {
  %y, %h, %c = recur.lstm %x, %wih, %whh, %bih, %bhh h0(%h0) c0(%c0)
      : (tensor<?x?x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
         tensor<?x5xf32>, tensor<?x5xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y, %h, %c : tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
)mlir";

TEST(CompiledLstmStateTest, InitialStatesAndAllResults) {
  std::string path = compileToLibrary(kLstmWithState, "lstm_state");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(11);
  model.bindRandomWeights(rng);
  for (auto [seq, batch] : {std::pair<int64_t, int64_t>{1, 1}, {6, 4}}) {
    std::vector<HostTensor> inputs;
    inputs.push_back(randomFloats({seq, batch, 3}, rng, 1.0f));
    inputs.push_back(randomFloats({batch, 5}, rng, 1.0f));
    inputs.push_back(randomFloats({batch, 5}, rng, 1.0f));
    model.runAndCompare(std::move(inputs));
  }
}

// The loss ops: log_softmax and cross_entropy with every reduction.
constexpr const char *kLosses = R"mlir(
func.func @forward(%x: tensor<?x?x4xf32> {recur.input = "x"},
                   %targets: tensor<?x?xi64> {recur.input = "targets"},
                   %w: tensor<9x4xf32> {recur.weight = "proj.weight"})
    -> (tensor<?x?x9xf32> {recur.output = "log_probs"}, tensor<f32> {recur.output = "mean"},
        tensor<f32> {recur.output = "sum"}, tensor<?x?xf32> {recur.output = "per_token"}) {
  %logits = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9x4xf32>) -> tensor<?x?x9xf32>
  %lp = recur.log_softmax %logits : tensor<?x?x9xf32> -> tensor<?x?x9xf32>
  %mean = recur.cross_entropy %logits, %targets : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<f32>
  %sum = recur.cross_entropy %logits, %targets reduction<sum> : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<f32>
  %none = recur.cross_entropy %logits, %targets reduction<none> : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %lp, %mean, %sum, %none : tensor<?x?x9xf32>, tensor<f32>, tensor<f32>, tensor<?x?xf32>
}
)mlir";

TEST(CompiledLossTest, LogSoftmaxAndCrossEntropy) {
  std::string path = compileToLibrary(kLosses, "losses");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(5);
  model.bindRandomWeights(rng, 2.0f);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomFloats({3, 5, 4}, rng, 3.0f));
  inputs.push_back(randomIds({3, 5}, 9, rng));
  model.runAndCompare(std::move(inputs));
}

} // namespace
