//===- CompiledModel.cpp - compile, load and run models in tests ----------===//

#include "CompiledModel.h"

#include "recur/Gen/ModelGen.h"
#include "recur/InitAll.h"
#include "recur/Target/Compile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace recur::testing;
namespace ref = recur::reference;

std::string recur::testing::compileToLibrary(mlir::ModuleOp module,
                                             const std::string &name,
                                             mlir::recur::Target target,
                                             mlir::recur::FusionLevel fusion) {
  mlir::recur::CompileOptions options;
  options.target = target;
  options.fusion = fusion;
  return compileToLibrary(module, name, options);
}

std::string
recur::testing::compileToLibrary(mlir::ModuleOp module, const std::string &name,
                                 const mlir::recur::CompileOptions &options) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &diagnostic) {
        diagnostics += diagnostic.str() + "\n";
        return mlir::success();
      });
  // ctest runs each test in its own process, in parallel: one file each.
  std::string path = ::testing::TempDir() + "/lib" + name + "-" +
                     std::to_string(getpid()) + ".so";
  if (mlir::failed(mlir::recur::compileModel(module, options, path))) {
    ADD_FAILURE() << "compiling " << name << " failed:\n" << diagnostics;
    return "";
  }
  return path;
}

std::string recur::testing::compileToLibrary(const std::string &mlirText,
                                             const std::string &name,
                                             mlir::recur::Target target,
                                             mlir::recur::FusionLevel fusion) {
  mlir::recur::CompileOptions options;
  options.target = target;
  options.fusion = fusion;
  return compileToLibrary(mlirText, name, options);
}

std::string
recur::testing::compileToLibrary(const std::string &mlirText,
                                 const std::string &name,
                                 const mlir::recur::CompileOptions &options) {
  mlir::DialectRegistry registry;
  mlir::recur::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(mlirText, &context);
  if (!module) {
    ADD_FAILURE() << "cannot parse the IR of " << name;
    return "";
  }
  return compileToLibrary(*module, name, options);
}

std::string recur::testing::readTestModel(const std::string &name) {
  std::ifstream file(std::string(RECUR_TEST_MODELS_DIR) + "/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

DLTensor HostTensor::view() {
  DLTensor tensor{};
  tensor.data = dtype.code == kDLInt ? static_cast<void *>(ids.data())
                                     : static_cast<void *>(floats.data());
  tensor.device = {kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(shape.size());
  tensor.dtype = dtype;
  tensor.shape = shape.data();
  return tensor;
}

ref::Value HostTensor::toReference() const {
  if (dtype.code == kDLInt)
    return ref::IdTensor(shape, ids);
  return ref::FloatTensor(shape, floats);
}

static int64_t product(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

HostTensor recur::testing::randomFloats(std::vector<int64_t> shape,
                                        std::mt19937_64 &rng, float bound) {
  HostTensor tensor;
  tensor.shape = std::move(shape);
  std::uniform_real_distribution<float> pick(-bound, bound);
  tensor.floats.resize(product(tensor.shape));
  for (float &value : tensor.floats)
    value = pick(rng);
  return tensor;
}

HostTensor recur::testing::randomIds(std::vector<int64_t> shape, int64_t bound,
                                     std::mt19937_64 &rng) {
  HostTensor tensor;
  tensor.shape = std::move(shape);
  tensor.dtype = {kDLInt, 64, 1};
  std::uniform_int_distribution<int64_t> pick(0, bound - 1);
  tensor.ids.resize(product(tensor.shape));
  for (int64_t &value : tensor.ids)
    value = pick(rng);
  return tensor;
}

std::string recur::testing::messageOf(RecurError *error) {
  if (!error)
    return "";
  std::string message = recur_error_message(error);
  recur_error_free(error);
  return message;
}

LoadedModel::LoadedModel(const std::string &path) {
  std::string error = messageOf(recur_model_load(path.c_str(), &model));
  EXPECT_EQ(error, "");
}

LoadedModel::~LoadedModel() { recur_model_free(model); }

void LoadedModel::bindRandomWeights(std::mt19937_64 &rng, float bound) {
  for (size_t i = 0; i < recur_model_num_tensors(model, RECUR_WEIGHT); ++i) {
    RecurTensorInfo info;
    ASSERT_EQ(messageOf(recur_model_tensor_info(model, RECUR_WEIGHT, i, &info)),
              "");
    HostTensor weight = randomFloats(
        std::vector<int64_t>(info.shape, info.shape + info.ndim), rng, bound);
    DLTensor view = weight.view();
    ASSERT_EQ(messageOf(recur_model_bind_weight(model, info.name, &view)), "");
    weights[info.name] = weight.toReference();
  }
}

void LoadedModel::runAndCompare(std::vector<HostTensor> inputs,
                                double tolerance) {
  std::map<std::string, ref::Value> arguments = weights;
  std::vector<DLTensor> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    RecurTensorInfo info;
    ASSERT_EQ(messageOf(recur_model_tensor_info(model, RECUR_INPUT, i, &info)),
              "");
    arguments[info.name] = inputs[i].toReference();
    views.push_back(inputs[i].view());
  }
  std::vector<const DLTensor *> pointers;
  for (DLTensor &view : views)
    pointers.push_back(&view);
  size_t numOutputs = recur_model_num_tensors(model, RECUR_OUTPUT);
  std::vector<DLManagedTensor *> outputs(numOutputs, nullptr);
  ASSERT_EQ(messageOf(recur_model_run(model, pointers.data(), pointers.size(),
                                      outputs.data(), numOutputs)),
            "");

  nlohmann::json description =
      nlohmann::json::parse(recur_model_description(model));
  std::vector<ref::Value> expected =
      ref::interpret(description.at("program"), arguments);
  ASSERT_EQ(expected.size(), numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    const auto &want = std::get<ref::FloatTensor>(expected[i]);
    const DLTensor &got = outputs[i]->dl_tensor;
    std::vector<int64_t> shape(got.shape, got.shape + got.ndim);
    EXPECT_EQ(shape, want.shape) << "output " << i;
    if (shape == want.shape) {
      const float *data = reinterpret_cast<const float *>(
          static_cast<const char *>(got.data) + got.byte_offset);
      int64_t mismatches = 0;
      for (size_t j = 0; j < want.data.size(); ++j)
        if (!(std::fabs(data[j] - want.data[j]) <=
              tolerance * (1 + std::fabs(want.data[j]))) &&
            mismatches++ < 5)
          ADD_FAILURE() << "output " << i << " element " << j << ": got "
                        << data[j] << ", reference " << want.data[j];
      EXPECT_EQ(mismatches, 0) << "output " << i;
    }
    outputs[i]->deleter(outputs[i]);
  }
}

void recur::testing::checkLstmLm(const LmShape &shape,
                                 const mlir::recur::CompileOptions &options,
                                 const std::string &name, double tolerance) {
  mlir::MLIRContext context;
  mlir::recur::LstmLmConfig config;
  config.vocab = shape.vocab;
  config.embed = shape.embed;
  config.hidden = shape.hidden;
  config.layers = shape.layers;
  if (shape.staticShapes) {
    config.seq = shape.seq;
    config.batch = shape.batch;
  }
  auto module = mlir::recur::buildLstmLm(context, config);
  std::string path = compileToLibrary(*module, name, options);
  ASSERT_FALSE(path.empty());
  LoadedModel model(path);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(shape.vocab * 1000 + shape.hidden);
  model.bindRandomWeights(rng);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomIds({shape.seq, shape.batch}, shape.vocab, rng));
  model.runAndCompare(std::move(inputs), tolerance);
}

void recur::testing::PrintTo(const LmShape &shape, std::ostream *os) {
  *os << "vocab " << shape.vocab << ", embed " << shape.embed << ", hidden "
      << shape.hidden << ", layers " << shape.layers << ", T " << shape.seq
      << ", B " << shape.batch << (shape.staticShapes ? " (static)" : "");
}

void mlir::recur::PrintTo(FusionLevel level, std::ostream *os) {
  *os << stringifyFusionLevel(level).str();
}
