//===- CompiledModel.h - compile, load and run models in tests --*- C++ -*-===//
//
// Compiles recur IR in-process with recur-compile's code, loads the library
// with librecur-runtime and keeps host copies of every tensor, so a test can
// compare the run with the reference interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TEST_UNITTESTS_COMPILEDMODEL_H
#define RECUR_TEST_UNITTESTS_COMPILEDMODEL_H

#include "recur/runtime.h"
#include "reference/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "recur/Target/Compile.h"
#include "gtest/gtest.h"

#include <random>
#include <string>
#include <vector>

namespace recur::testing {

/// Compiles `module` for `target` to a shared library in the
/// test's temporary directory; returns its path, or "" after reporting the
/// diagnostics as a test failure.
std::string compileToLibrary(
    mlir::ModuleOp module, const std::string &name,
    mlir::recur::Target target = mlir::recur::Target::cpu,
    mlir::recur::FusionLevel fusion = mlir::recur::FusionLevel::wavefront);
std::string compileToLibrary(mlir::ModuleOp module, const std::string &name,
                             const mlir::recur::CompileOptions &options);
std::string compileToLibrary(
    const std::string &mlirText, const std::string &name,
    mlir::recur::Target target = mlir::recur::Target::cpu,
    mlir::recur::FusionLevel fusion = mlir::recur::FusionLevel::wavefront);
std::string compileToLibrary(const std::string &mlirText,
                             const std::string &name,
                             const mlir::recur::CompileOptions &options);

/// The text of a model in test/models/ (shared with lit and the GPU suite).
std::string readTestModel(const std::string &name);

/// A host tensor with its DLPack view.
struct HostTensor {
  std::vector<int64_t> shape;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<float> floats;
  std::vector<int64_t> ids;

  DLTensor view();
  reference::Value toReference() const;
};

HostTensor randomFloats(std::vector<int64_t> shape, std::mt19937_64 &rng,
                        float bound);
HostTensor randomIds(std::vector<int64_t> shape, int64_t bound,
                     std::mt19937_64 &rng);

/// Owns a loaded model; frees it at the end of the test.
class LoadedModel {
public:
  explicit LoadedModel(const std::string &path);
  ~LoadedModel();
  RecurModel *get() const { return model; }
  explicit operator bool() const { return model != nullptr; }

  /// Binds random weights (uniform in [-bound, bound]) and remembers them.
  void bindRandomWeights(std::mt19937_64 &rng, float bound = 0.5f);
  /// Runs on `inputs` (description order) and checks every output against the
  /// reference interpreter with |got - want| <= tolerance * (1 + |want|).
  void runAndCompare(std::vector<HostTensor> inputs, double tolerance = 1e-4);

  std::map<std::string, reference::Value> weights;

private:
  RecurModel *model = nullptr;
};

/// The message of `error` (freed), or "" for success.
std::string messageOf(RecurError *error);

/// The sizes of recur-gen's LSTM LM and of its tokens ([seq, batch]), with
/// T and B fixed in the IR or left dynamic.
struct LmShape {
  int64_t vocab, embed, hidden, layers, seq, batch;
  bool staticShapes = false;
};
/// How gtest prints a shape in a parameterized test's description (ctest
/// lists it), instead of its bytes.
void PrintTo(const LmShape &shape, std::ostream *os);

/// Compiles the LM of `shape` with `options` (as `name`), runs it on random
/// weights and tokens drawn from the shape, and compares every output with
/// the reference within `tolerance` (runAndCompare).
void checkLstmLm(const LmShape &shape,
                 const mlir::recur::CompileOptions &options,
                 const std::string &name, double tolerance = 1e-4);

} // namespace recur::testing

namespace mlir::recur {
/// A fusion level in a parameterized test's description: its name.
void PrintTo(FusionLevel level, std::ostream *os);
} // namespace mlir::recur

#endif // RECUR_TEST_UNITTESTS_COMPILEDMODEL_H
