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
#include "common/Dtypes.h"

using namespace recur::testing;
using namespace mlir::recur;

namespace {

struct EmulatedCase {
  const char *name;
  LmShape shape;
  bool persistent = true, tiledGemms = true, stationaryWeights = true;
  const char *precision = "fp32";
};
void PrintTo(const EmulatedCase &c, std::ostream *os) { *os << c.name; }

std::vector<EmulatedCase> emulatedCases() {
  return {
      // 144 rows x 300 columns: 2 x 3 GEMM tiles of 128; K = 12 is not a
      // multiple of the slice of 8 (scalar loads, zeros past K). The steps'
      // blocks own 4 of the 12 units (a gate tile of 4): 6 groups (3 per
      // layer at `cell`) on a persistent grid of 2 blocks, which stage
      // their groups' weights at every step; 64 iterations of 4 lanes.
      {"tiles", {300, 10, 12, 2, 9, 16}},
      // K = 16 (and the embedding's 8): aligned vector loads. Groups of 8
      // units: 6, and 2 per layer at `cell`, where each block owns one and
      // stages its weights once.
      {"vector_loads", {140, 8, 16, 3, 5, 4}},
      // Two layers of 8 units: 2 groups, each block's weights staged once
      // (also at `wavefront`); 8 units x 40 rows: a thread runs 2 of a
      // group's 320 iterations.
      {"weights_on_chip", {50, 6, 8, 2, 4, 40}},
      // One row, one step; 7 units: groups of one unit, each run by a
      // warp whose 32 lanes share sums of 7 terms (most lanes add none).
      {"single_row", {23, 5, 7, 1, 1, 1}},
      // Batch 1, 40 units in groups of 8: 8 iterations of 32 lanes, sums
      // of 40 terms (1 or 2 per lane); at `wavefront` layer 1 passes its
      // w_ih partial sums on to its w_hh loop before the shuffles.
      {"batch_one", {64, 6, 40, 2, 5, 1}},
      // Batch 3: 24 iterations of 8 lanes (192 of 256 threads).
      {"small_batch", {64, 6, 40, 2, 5, 3}},
      {"per_step_kernels", {300, 10, 12, 2, 9, 16}, /*persistent=*/false},
      {"untiled_gemms", {300, 10, 12, 2, 9, 16}, true, /*tiledGemms=*/false},
      {"weights_from_l2",
       {300, 10, 12, 2, 9, 16},
       true,
       true,
       /*stationaryWeights=*/false},
      // Tensor-core GEMMs (m16n8k8 MMAs on tf32): 2 x 3 tiles of 128 as in
      // `tiles`, each of 8 warps of 64 x 32 outputs; K = 12 (scalar loads,
      // zeros past K, one slice of 16 k) and, folded into the embedding at
      // `hoist` and above, K = 10 against 48 gate rows.
      {"tf32", {300, 10, 12, 2, 9, 16}, true, true, true, "tf32"},
      // K = 32, 16: two slices, aligned vector loads. At `cell` and above
      // the steps' products run on tensor cores too (H = 32, a multiple of
      // 16): groups of 8 units, two MMA tiles of 16 slot rows.
      {"tf32_vector_loads", {140, 16, 32, 2, 5, 4}, true, true, true, "tf32"},
      // The steps' products on tensor cores over two chunks of 64 batch
      // rows, the second with 6 rows (the rest load row 69 and are not
      // stored); 3 layers of 16 units in groups of 4 (12 groups), layers 1
      // and 2 with two products each at `wavefront`.
      {"tf32_recurrence", {50, 8, 16, 3, 4, 70}, true, true, true, "tf32"},
  };
}

class EmulatedCudaLmTest
    : public ::testing::TestWithParam<std::tuple<EmulatedCase, FusionLevel>> {};

TEST_P(EmulatedCudaLmTest, MatchesReference) {
  const auto &[c, fusion] = GetParam();
  CompileOptions options;
  options.target = Target::cudaEmulator;
  options.fusion = fusion;
  options.persistentKernels = c.persistent;
  options.tiledGemms = c.tiledGemms;
  options.stationaryWeights = c.stationaryWeights;
  options.precision = symbolizePrecision(c.precision);
  // Outputs are f32.
  DLDataType f32{kDLFloat, 32, 1};
  checkLstmLm(c.shape, options,
              std::string("emulated_") + c.name + "_" +
                  stringifyFusionLevel(fusion).str(),
              recur::checkTolerance(f32, c.precision));
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
