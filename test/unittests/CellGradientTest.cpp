//===- CellGradientTest.cpp - derived cell backwards by finite differences ===//
//
// recur-differentiate's backward of a recur.rnn (the reverse recurrence it
// derives from the cell's region, RecurCellGradients.cpp), run by the
// reference on its described program, against central finite differences
// of the forward's own reference program: the gradient of
// L = Σ d_y · y + Σ d_h_n · h_n with respect to sampled elements of the
// input, the initial state and every weight. The cells cover every rule the
// region ops have (layer norms, σ, tanh, clamp, pow, abs, log1p, sums over
// the features, broadcast parameters, a parameter transformed in the cell)
// and a packed batch's lengths.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/InitAll.h"
#include "recur/Target/ModelDescription.h"
#include "recur/Transforms/Passes.h"
#include "reference/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

using namespace recur::reference;
using nlohmann::json;

namespace {

std::string readInput(const std::string &name) {
  std::ifstream file(std::string(RECUR_TEST_INPUTS_DIR) + "/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The description of `text`'s @forward after recur-differentiate, with
/// the function marked `attribute` (recur.keep_activations or recur.vjp).
json describe(const std::string &text, llvm::StringRef attribute) {
  mlir::DialectRegistry registry;
  mlir::recur::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return json();
  auto entry = module->lookupSymbol<mlir::func::FuncOp>("forward");
  entry->setAttr(attribute, mlir::UnitAttr::get(&context));
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(mlir::recur::createDifferentiate());
  if (mlir::failed(pm.run(*module)))
    return json();
  mlir::FailureOr<std::string> description =
      mlir::recur::describeModel(entry, nullptr, "cpu", "", "none", "fp32");
  if (mlir::failed(description))
    return json();
  return json::parse(*description);
}

double dot(const FloatTensor &a, const FloatTensor &b) {
  double sum = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    sum += double(a.data[i]) * b.data[i];
  return sum;
}

class CellGradientTest : public ::testing::TestWithParam<const char *> {};

TEST_P(CellGradientTest, MatchesFiniteDifferences) {
  std::string text = readInput(GetParam());
  ASSERT_FALSE(text.empty());
  json forward = describe(text, "recur.keep_activations");
  json backward = describe(text, "recur.vjp");
  ASSERT_TRUE(forward.contains("program")) << "no forward program";
  ASSERT_TRUE(backward.contains("program")) << "no backward program";

  // Random inputs and weights, T = 4, B = 3, lengths 4, 1, 3.
  const int64_t steps = 4, batch = 3;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> uniform(-0.8f, 0.8f);
  std::map<std::string, Value> arguments;
  std::vector<std::string> floats;
  for (const json &argument : forward.at("arguments")) {
    std::string name = argument.at("name");
    std::vector<int64_t> shape = argument.at("shape");
    const json &dims = argument.at("dims");
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] < 0)
        shape[d] = dims[d] == "T" ? steps : batch;
    if (argument.at("dtype") == "i64") {
      arguments[name] = IdTensor(shape, {4, 1, 3});
      continue;
    }
    FloatTensor tensor(shape);
    for (float &value : tensor.data)
      value = uniform(rng);
    arguments[name] = tensor;
    floats.push_back(name);
  }

  // L's weights: d_<output> for every output that is not kept.
  std::vector<std::string> outputs;
  for (const json &output : forward.at("outputs"))
    outputs.push_back(output.at("name"));
  std::vector<Value> results = interpret(forward.at("program"), arguments);
  std::map<std::string, FloatTensor> seeds;
  std::map<std::string, Value> backwardArguments = arguments;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const FloatTensor &result = std::get<FloatTensor>(results[k]);
    if (outputs[k].rfind("kept_", 0) == 0) {
      backwardArguments[outputs[k]] = result;
      continue;
    }
    FloatTensor seed(result.shape);
    for (float &value : seed.data)
      value = uniform(rng);
    seeds[outputs[k]] = seed;
    backwardArguments["d_" + outputs[k]] = seed;
  }
  auto loss = [&](const std::map<std::string, Value> &values) {
    std::vector<Value> out = interpret(forward.at("program"), values);
    double sum = 0;
    for (size_t k = 0; k < outputs.size(); ++k)
      if (seeds.count(outputs[k]))
        sum += dot(std::get<FloatTensor>(out[k]), seeds.at(outputs[k]));
    return sum;
  };

  std::vector<Value> gradients =
      interpret(backward.at("program"), backwardArguments);
  std::vector<std::string> gradientNames;
  for (const json &output : backward.at("outputs"))
    gradientNames.push_back(output.at("name"));
  ASSERT_EQ(gradientNames.size(), floats.size());
  for (size_t k = 0; k < floats.size(); ++k) {
    const std::string &name = floats[k];
    ASSERT_EQ(gradientNames[k], "d_" + name);
    const FloatTensor &analytic = std::get<FloatTensor>(gradients[k]);
    FloatTensor &value = std::get<FloatTensor>(arguments[name]);
    ASSERT_EQ(analytic.shape, value.shape) << name;
    double largest = 0;
    for (float g : analytic.data)
      largest = std::max(largest, std::fabs(double(g)));
    // Sampled elements: every one of a small tensor, 12 of a large one.
    std::uniform_int_distribution<size_t> pick(0, value.data.size() - 1);
    size_t samples = std::min<size_t>(value.data.size(), 12);
    for (size_t s = 0; s < samples; ++s) {
      size_t i = value.data.size() <= 12 ? s : pick(rng);
      float original = value.data[i];
      const float eps = 1e-3f;
      value.data[i] = original + eps;
      double plus = loss(arguments);
      value.data[i] = original - eps;
      double minus = loss(arguments);
      value.data[i] = original;
      double numeric = (plus - minus) / (2 * double(eps));
      EXPECT_NEAR(analytic.data[i], numeric, 2e-3 * (1 + largest))
          << name << "[" << i << "] of " << GetParam();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cells, CellGradientTest,
    ::testing::Values("layer-norm-lstm.mlir", "peephole-lstm.mlir",
                      "every-op-cell.mlir", "leaky-elman-cell.mlir"),
    [](const ::testing::TestParamInfo<const char *> &info) {
      std::string name = info.param;
      std::string result;
      for (char c : name.substr(0, name.find('.')))
        result += std::isalnum(c) ? c : '_';
      return result;
    });

} // namespace
