//===- CompiledModelTest.cpp - compiled models vs the reference -----------===//
//
// Numerics of the whole CPU path (recur-lower-to-cpu, recur-compile,
// librecur-runtime) against the reference interpreter, at every fusion level,
// on shapes chosen to catch indexing mistakes: odd sizes, B = 1, T = 1,
// I != H, 1 to 4 layers, with and without initial states, static and
// dynamic T/B.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

#include "recur/Gen/ModelGen.h"

#include "mlir/IR/MLIRContext.h"

#include <fstream>
#include <sstream>

using namespace recur::testing;
using namespace mlir::recur;
using mlir::recur::FusionLevel;

namespace {

using LmCase = LmShape;

std::string describe(const LmCase &c, FusionLevel fusion) {
  std::ostringstream name;
  name << "fusion_" << stringifyFusionLevel(fusion).str() << "_lm_v" << c.vocab
       << "_e" << c.embed << "_h" << c.hidden << "_l" << c.layers << "_t"
       << c.seq << "_b" << c.batch << (c.staticShapes ? "_static" : "_dynamic");
  return name.str();
}

class CompiledLmTest
    : public ::testing::TestWithParam<std::tuple<LmCase, FusionLevel>> {};

TEST_P(CompiledLmTest, MatchesReference) {
  const auto &[c, fusion] = GetParam();
  CompileOptions options;
  options.fusion = fusion;
  checkLstmLm(c, options, describe(c, fusion));
}

// Hand-picked corners plus a seeded draw of odd sizes.
std::vector<LmCase> lmCases() {
  std::vector<LmCase> cases = {
      {11, 5, 7, 1, 1, 1, false},  // T = 1, B = 1
      {13, 6, 3, 2, 4, 1, false},  // B = 1, I != H
      {17, 4, 9, 3, 1, 5, true},   // T = 1, static
      {10, 8, 8, 4, 3, 2, false},  // 4 layers, I == H
      {31, 7, 33, 2, 6, 3, false}, // H above the vector width
      // Whole vector tiles of units: the CPU's fused step as a register tile,
      // odd T (the loop runs steps in pairs), rows in full and short tiles.
      {29, 10, 32, 2, 7, 9, false},
      {12, 16, 16, 1, 4, 13, true}, // even T, static
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

INSTANTIATE_TEST_SUITE_P(Shapes, CompiledLmTest,
                         ::testing::Combine(::testing::ValuesIn(lmCases()),
                                            ::testing::ValuesIn(kFusionLevels)),
                         [](const auto &info) {
                           return describe(std::get<0>(info.param),
                                           std::get<1>(info.param));
                         });

std::string fusionName(const ::testing::TestParamInfo<FusionLevel> &info) {
  return stringifyFusionLevel(info.param).str();
}

class CompiledAtEveryFusionLevel
    : public ::testing::TestWithParam<FusionLevel> {
protected:
  std::string compile(mlir::ModuleOp module, const std::string &name) {
    return compileToLibrary(module, name + "_" + fusionName({GetParam(), 0}),
                            Target::cpu, GetParam());
  }
  std::string compile(const std::string &text, const std::string &name) {
    return compileToLibrary(text, name + "_" + fusionName({GetParam(), 0}),
                            Target::cpu, GetParam());
  }
};

INSTANTIATE_TEST_SUITE_P(Fusion, CompiledAtEveryFusionLevel,
                         ::testing::ValuesIn(kFusionLevels), fusionName);

TEST_P(CompiledAtEveryFusionLevel, LstmStackWithFloatInputs) {
  mlir::MLIRContext context;
  LstmStackConfig config;
  config.input = 5;
  config.hidden = 6;
  config.layers = 3;
  auto module = buildLstmStack(context, config);
  std::string path = compile(*module, "lstm_stack");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(7);
  model.bindRandomWeights(rng);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomFloats({4, 3, 5}, rng, 1.0f));
  model.runAndCompare(std::move(inputs));
}

// Initial states as inputs, and all three LSTM results as outputs.
// Fused models compute tensors from their weights (bias sums, interleaved
// w_hh) once per binding: binding new weights must recompute them, and the
// description lists them with the prologue.
TEST_P(CompiledAtEveryFusionLevel, RebindingWeightsRecomputesDerivedTensors) {
  mlir::MLIRContext context;
  LstmStackConfig config;
  config.input = 4;
  config.hidden = 16; // a whole vector tile: the CPU fuses the cell
  config.layers = 2;
  auto module = buildLstmStack(context, config);
  std::string path = compile(*module, "lstm_rebind");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::string description = recur_model_description(model.get());
  bool fused = GetParam() != FusionLevel::none;
  EXPECT_EQ(description.find("\"kind\":\"derived\"") != std::string::npos,
            fused);
  EXPECT_EQ(description.find("\"prologue\"") != std::string::npos, fused);
  if (GetParam() >= FusionLevel::cell)
    EXPECT_NE(description.find("interleave_gates(weight_hh_l1)"),
              std::string::npos);
  std::mt19937_64 rng(5);
  HostTensor input = randomFloats({3, 2, 4}, rng, 1.0f);
  for (int binding = 0; binding < 3; ++binding) {
    model.bindRandomWeights(rng);
    model.runAndCompare({input});
    model.runAndCompare({input});
  }
}

TEST_P(CompiledAtEveryFusionLevel, InitialStatesAndAllResults) {
  std::string path = compile(readTestModel("lstm_state.mlir"), "lstm_state");
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
TEST_P(CompiledAtEveryFusionLevel, LogSoftmaxAndCrossEntropy) {
  std::string path = compile(readTestModel("losses.mlir"), "losses");
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
