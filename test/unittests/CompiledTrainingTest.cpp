//===- CompiledTrainingTest.cpp - compiled training steps vs the reference ===//
//
// recur-gen lstm-lm --train, compiled for the CPU, runs one step; its loss and
// the weights it updated in place are checked against the double-precision
// reference (reference/Training.h: backward through time by hand, clip, SGD).
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

#include "Safetensors.h"
#include "recur/Gen/ModelGen.h"
#include "reference/Training.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace recur::testing;
namespace ref = recur::reference;
using mlir::recur::FusionLevel;

namespace {

struct TrainingCase {
  const char *name;
  int64_t vocab, embed, hidden, layers, seq, batch;
  double clipNorm;
  FusionLevel fusion;
  /// T and B in the IR: the weight gradients take the packed GEMM kernels
  /// (recur-pack-gemm-operands needs the rows static).
  bool staticShapes = false;
};

void PrintTo(const TrainingCase &c, std::ostream *os) { *os << c.name; }

class CompiledTrainingTest : public ::testing::TestWithParam<TrainingCase> {};

/// The model's current value of weight `name`.
ref::FloatTensor readWeight(RecurModel *model, const std::string &name,
                            const std::vector<int64_t> &shape) {
  HostTensor host;
  host.shape = shape;
  host.floats.resize(ref::FloatTensor(shape).numElements());
  DLTensor view = host.view();
  EXPECT_EQ(messageOf(recur_model_read_weight(model, name.c_str(), &view)), "");
  return {shape, host.floats};
}

TEST_P(CompiledTrainingTest, StepMatchesReference) {
  const TrainingCase &c = GetParam();
  constexpr double kLearningRate = 2.0;
  mlir::MLIRContext context;
  mlir::recur::LstmLmConfig config;
  config.vocab = c.vocab;
  config.embed = c.embed;
  config.hidden = c.hidden;
  config.layers = c.layers;
  config.train = mlir::recur::TrainConfig{kLearningRate, c.clipNorm};
  if (c.staticShapes) {
    config.seq = c.seq;
    config.batch = c.batch;
  }
  auto module = mlir::recur::buildLstmLm(context, config);
  std::string path = compileToLibrary(*module, std::string("train-") + c.name,
                                      mlir::recur::Target::cpu, c.fusion);
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);

  std::mt19937_64 rng(17);
  model.bindRandomWeights(rng, 0.4f);
  HostTensor tokens = randomIds({c.seq, c.batch}, c.vocab, rng);
  HostTensor targets = randomIds({c.seq, c.batch}, c.vocab, rng);
  DLTensor views[] = {tokens.view(), targets.view()};
  const DLTensor *inputs[] = {&views[0], &views[1]};
  DLManagedTensor *loss = nullptr;
  ASSERT_EQ(messageOf(recur_model_run(model.get(), inputs, 2, &loss, 1)), "");
  float gotLoss = *static_cast<const float *>(loss->dl_tensor.data);
  loss->deleter(loss);

  std::map<std::string, ref::FloatTensor> before;
  for (const auto &[name, value] : model.weights)
    before[name] = std::get<ref::FloatTensor>(value);
  ref::DoubleTensors weights = ref::toDouble(before);
  ref::LossGradients want = ref::lstmLmLossGradients(
      weights, std::get<ref::IdTensor>(tokens.toReference()),
      std::get<ref::IdTensor>(targets.toReference()));
  if (c.clipNorm > 0)
    ref::clipGradientNorm(want.gradients, c.clipNorm);
  EXPECT_NEAR(gotLoss, want.loss, 1e-5 * (1 + std::abs(want.loss)));

  // Each weight moved by -lr * gradient, in place: compared as steps, so
  // that a wrong gradient is not hidden by the weight's own size.
  for (const auto &[name, old] : before) {
    SCOPED_TRACE(name);
    ref::FloatTensor now = readWeight(model.get(), name, old.shape);
    const ref::DoubleTensor &gradient = want.gradients.at(name);
    double largest = 0;
    for (double g : gradient.data)
      largest = std::max(largest, kLearningRate * std::abs(g));
    double worst = 0;
    for (size_t i = 0; i < old.data.size(); ++i) {
      double got = double(now.data[i]) - double(old.data[i]);
      double expected = -kLearningRate * gradient.data[i];
      worst = std::max(worst, std::abs(got - expected));
    }
    // With T = 1, w_hh meets only the zero initial state: no step at all.
    EXPECT_LE(worst, 2e-3 * largest) << "largest step " << largest;
  }
}

// recur_model_save_weights writes the weights as the steps left them, under
// their state_dict names, and refuses to save a weight never bound.
TEST(CompiledTrainingSaveTest, SavesTheTrainedWeights) {
  mlir::MLIRContext context;
  mlir::recur::LstmLmConfig config;
  config.vocab = 9;
  config.embed = 3;
  config.hidden = 5;
  config.layers = 2;
  config.train = mlir::recur::TrainConfig{1.0, 0};
  auto module = mlir::recur::buildLstmLm(context, config);
  std::string path = compileToLibrary(*module, "train-save");
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::string file = ::testing::TempDir() + "/trained.safetensors";
  EXPECT_EQ(messageOf(recur_model_save_weights(model.get(), file.c_str())),
            "weight 'embedding.weight' is not bound");

  std::mt19937_64 rng(5);
  model.bindRandomWeights(rng, 0.4f);
  HostTensor tokens = randomIds({4, 2}, config.vocab, rng);
  HostTensor targets = randomIds({4, 2}, config.vocab, rng);
  DLTensor views[] = {tokens.view(), targets.view()};
  const DLTensor *inputs[] = {&views[0], &views[1]};
  for (int step = 0; step < 2; ++step) {
    DLManagedTensor *loss = nullptr;
    ASSERT_EQ(messageOf(recur_model_run(model.get(), inputs, 2, &loss, 1)), "");
    loss->deleter(loss);
  }
  ASSERT_EQ(messageOf(recur_model_save_weights(model.get(), file.c_str())), "");

  std::string error;
  auto saved = recur::safetensors::File::open(file, error);
  ASSERT_TRUE(saved) << error;
  EXPECT_EQ(saved->entries().size(), model.weights.size());
  for (const auto &[name, value] : model.weights) {
    SCOPED_TRACE(name);
    const auto &bound = std::get<ref::FloatTensor>(value);
    ref::FloatTensor now = readWeight(model.get(), name, bound.shape);
    EXPECT_NE(now.data, bound.data) << "the steps did not change it";
    const recur::safetensors::Entry *entry = saved->find(name);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->dtype, "F32");
    EXPECT_EQ(entry->shape, bound.shape);
    ASSERT_EQ(entry->size, now.data.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(entry->data, now.data.data(), entry->size), 0);
  }
  EXPECT_EQ(messageOf(recur_model_save_weights(model.get(), "/nonexistent/x")),
            "cannot write safetensors file '/nonexistent/x': No such file or "
            "directory");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CompiledTrainingTest,
    ::testing::Values(
        TrainingCase{"OneLayerNoClip", 11, 5, 7, 1, 4, 3, 0, FusionLevel::wavefront},
        TrainingCase{"TwoLayersClipped", 13, 6, 9, 2, 5, 2, 0.1,
                     FusionLevel::wavefront},
        TrainingCase{"SingleStepSingleRow", 7, 3, 4, 2, 1, 1, 0,
                     FusionLevel::wavefront},
        TrainingCase{"BatchOfOneThreeLayers", 9, 4, 5, 3, 6, 1, 0.5,
                     FusionLevel::wavefront},
        TrainingCase{"UnfusedInputWiderThanHidden", 10, 12, 5, 2, 3, 4, 0,
                     FusionLevel::none},
        TrainingCase{"HoistedOnly", 10, 5, 6, 2, 4, 2, 0.2, FusionLevel::hoist},
        // Sizes that are not multiples of any panel width.
        TrainingCase{"StaticShapesPackedGemms", 67, 19, 37, 2, 7, 5, 0.3,
                     FusionLevel::wavefront, true}),
    [](const ::testing::TestParamInfo<TrainingCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
