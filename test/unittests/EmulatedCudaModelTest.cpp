//===- EmulatedCudaModelTest.cpp - CUDA kernels on the CPU vs reference ---===//
//
// Numerics of the CUDA pipeline's generated kernels without a GPU: models
// compiled with --target=cuda-emulator run the same kernels (tiled GEMMs,
// persistent kernels with their grid barrier, the per-step kernels) with a
// block as an OpenMP team (recur-gpu-emulate-launches), and are compared
// with the reference interpreter. Shapes give the GEMMs several row and
// column tiles and a K that is, or is not, a multiple of the k-slice, and
// the persistent kernels more than one block.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

using namespace recur::testing;
using namespace mlir::recur;

namespace {

struct EmulatedCase {
  const char *name;
  LmShape shape;
  bool persistent = true, tiledGemms = true;
};

std::vector<EmulatedCase> emulatedCases() {
  return {
      // 144 rows x 300 columns: 2 x 3 GEMM tiles of 128; K = 12 is not a
      // multiple of the slice of 8 (scalar loads, zeros past K); 16 rows of
      // 2 layers of 12 units: 384 threads, a persistent grid of 2 blocks.
      {"tiles", {300, 10, 12, 2, 9, 16}},
      // K = 16 (and the embedding's 8): aligned vector loads.
      {"vector_loads", {140, 8, 16, 3, 5, 4}},
      // One row, one step.
      {"single_row", {23, 5, 7, 1, 1, 1}},
      {"per_step_kernels", {300, 10, 12, 2, 9, 16}, /*persistent=*/false},
      {"untiled_gemms", {300, 10, 12, 2, 9, 16}, true, /*tiledGemms=*/false},
  };
}

class EmulatedCudaLmTest
    : public ::testing::TestWithParam<std::tuple<EmulatedCase, FusionLevel>> {};

TEST_P(EmulatedCudaLmTest, MatchesReference) {
  const auto &[c, fusion] = GetParam();
  CompileOptions options;
  options.target = kCudaEmulatorTarget.str();
  options.fusion = fusion;
  options.persistentKernels = c.persistent;
  options.tiledGemms = c.tiledGemms;
  checkLstmLm(c.shape, options,
              std::string("emulated_") + c.name + "_" +
                  stringifyFusionLevel(fusion).str());
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, EmulatedCudaLmTest,
    ::testing::Combine(::testing::ValuesIn(emulatedCases()),
                       ::testing::ValuesIn(kFusionLevels)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             stringifyFusionLevel(std::get<1>(info.param)).str();
    });

} // namespace
