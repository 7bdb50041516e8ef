//===- Backend.cpp - the backend a model's target asks for ----------------===//

#include "Backend.h"

std::unique_ptr<recur::runtime::Backend>
recur::runtime::createBackend(void *library, const std::string &path,
                              const ModelDescription &description) {
  size_t numInputs = description.inputs.size();
  switch (description.target) {
  case RECUR_TARGET_CPU:
    return createCpuBackend(library, numInputs);
  case RECUR_TARGET_CUDA:
    return createCudaBackend(library, path, description.cudaArch, numInputs);
  }
  throw Failure("'" + path + "' has an unknown target");
}
