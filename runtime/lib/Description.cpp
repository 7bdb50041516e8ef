//===- Description.cpp - what a compiled model expects --------------------===//

#include "Description.h"

#include "Dtypes.h"
#include "Shapes.h"
#include "recur/runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace recur::runtime;
using nlohmann::json;

std::string TensorSpec::formattedShape() const {
  return formatShape(shape, dims);
}

static TensorSpec parseSpec(const json &entry) {
  TensorSpec spec;
  spec.name = entry.at("name").get<std::string>();
  spec.dtypeName = entry.at("dtype").get<std::string>();
  const recur::Dtype *dtype = recur::findDtypeByName(spec.dtypeName);
  if (!dtype)
    throw Failure("tensor '" + spec.name + "' has unknown dtype '" +
                  spec.dtypeName + "'");
  spec.dtype = dtype->dlpack;
  spec.shape = entry.at("shape").get<std::vector<int64_t>>();
  for (const json &dim : entry.at("dims"))
    spec.dims.push_back(dim.is_null() ? "" : dim.get<std::string>());
  if (spec.dims.size() != spec.shape.size())
    throw Failure("tensor '" + spec.name + "' has " +
                  std::to_string(spec.shape.size()) + " sizes but " +
                  std::to_string(spec.dims.size()) + " dims");
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if (spec.shape[i] < 0 && spec.dims[i] != "T" && spec.dims[i] != "B")
      throw Failure("tensor '" + spec.name + "' has a dynamic size that is " +
                    "not T or B");
  if (entry.contains("range"))
    spec.indexBound = entry.at("range").at(1).get<int64_t>();
  if (entry.contains("lengths")) {
    spec.sequenceLengths = true;
    spec.lengthsSteps = entry.at("lengths").at("steps").get<int64_t>();
  }
  return spec;
}

ModelDescription recur::runtime::parseDescription(const std::string &text,
                                                  const std::string &path) {
  ModelDescription model;
  try {
    json description = json::parse(text);
    int version = description.at("abi_version").get<int>();
    if (version != RECUR_MODEL_ABI_VERSION)
      throw Failure("'" + path + "' was compiled for model ABI " +
                    std::to_string(version) + "; this runtime reads ABI " +
                    std::to_string(RECUR_MODEL_ABI_VERSION) +
                    ": recompile it with this build's recur-compile");
    std::string target = description.at("target").get<std::string>();
    if (target == "cuda") {
      model.target = RECUR_TARGET_CUDA;
      model.cudaArch = description.at("cuda_arch").get<std::string>();
    } else if (target != "cpu") {
      throw Failure("'" + path + "' was compiled for target '" + target +
                    "'; this runtime runs cpu and cuda models");
    }
    const json &arguments = description.at("arguments");
    model.numArguments = arguments.size();
    for (size_t index = 0; index < arguments.size(); ++index) {
      TensorSpec spec = parseSpec(arguments[index]);
      spec.argumentIndex = index;
      std::string kind = arguments[index].at("kind").get<std::string>();
      if (kind == "input")
        model.inputs.push_back(spec);
      else if (kind == "weight")
        model.weights.push_back(spec);
      else if (kind == "derived")
        model.derived.push_back(spec);
      else
        throw Failure("'" + path + "' has an argument of unknown kind '" +
                      kind + "'");
    }
    for (const json &output : description.at("outputs"))
      model.outputs.push_back(parseSpec(output));
    if (description.contains("prologue")) {
      const json &prologue = description.at("prologue");
      auto find = [&](const std::vector<TensorSpec> &specs,
                      const std::string &name, const char *kind) {
        for (size_t index = 0; index < specs.size(); ++index)
          if (specs[index].name == name)
            return index;
        throw Failure("'" + path + "' has a weight prologue using " + kind +
                      " '" + name + "', which the model does not have");
      };
      for (const json &name : prologue.at("weights"))
        model.prologueWeights.push_back(
            find(model.weights, name.get<std::string>(), "weight"));
      for (const json &name : prologue.at("results"))
        model.prologueResults.push_back(
            find(model.derived, name.get<std::string>(), "derived tensor"));
    }
    if (description.contains("training"))
      for (const json &name : description.at("training").at("updates")) {
        auto weight = std::find_if(
            model.weights.begin(), model.weights.end(),
            [&](const TensorSpec &spec) { return spec.name == name; });
        if (weight == model.weights.end())
          throw Failure("'" + path + "' updates the weight '" +
                        name.get<std::string>() +
                        "', which the model does not have");
        model.updatedWeights.push_back(weight - model.weights.begin());
      }
    std::vector<bool> computed(model.derived.size(), false);
    for (size_t index : model.prologueResults)
      computed[index] = true;
    for (size_t index = 0; index < model.derived.size(); ++index)
      if (!computed[index])
        throw Failure("'" + path + "' takes the derived tensor '" +
                      model.derived[index].name +
                      "', which no weight prologue computes");
  } catch (const json::exception &error) {
    throw Failure("'" + path +
                  "' has a corrupt model description: " + error.what());
  }
  for (auto *specs :
       {&model.inputs, &model.weights, &model.outputs, &model.derived})
    for (TensorSpec &spec : *specs)
      for (const std::string &dim : spec.dims)
        spec.dimNames.push_back(dim.c_str());
  return model;
}
