//===- FakeCudaTest.cpp - the runtime's CUDA backend on a fake driver -----===//
//
// The host side of CUDA models without a GPU: a compiled model is bound to
// the runtime's mgpu* functions, its kernels are loaded and unloaded, every
// launch and allocation uses the model's stream, device and host tensors are
// accepted or refused, driver errors become error values, and nothing leaks.
// The driver is test/unittests/fake-cuda (kernels are counted, not run), so
// these tests say nothing about numerics: test/gpu/run-suite.sh does, on a GPU.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

#include "recur/Gen/ModelGen.h"

#include "mlir/IR/MLIRContext.h"
#include "gmock/gmock.h"

#include <dlfcn.h>

#include <set>

using namespace recur::testing;
using ::testing::HasSubstr;

namespace {

/// Sets `function` to the symbol `name` of `library` (null if absent).
template <typename Function>
void resolve(void *library, Function &function, const char *name) {
  function = reinterpret_cast<Function>(dlsym(library, name));
}

/// The fake driver's inspection functions (fake_cuda_*).
struct FakeDriver {
  int (*liveAllocations)() = nullptr;
  int (*loadedModules)() = nullptr;
  int (*launches)() = nullptr;
  int (*foreignStreamUses)() = nullptr;
  void (*failAllocation)(int) = nullptr;
  void (*faultAtLaunch)(int) = nullptr;
  void (*setCapability)(int) = nullptr;
  void *(*deviceAlloc)(size_t) = nullptr;
  void (*deviceFree)(void *) = nullptr;
  int (*invalidFrees)() = nullptr;
  int (*cooperativeLaunches)() = nullptr;
  int (*lastCooperativeGrid)() = nullptr;
  void (*setBlocksPerMultiprocessor)(int) = nullptr;

  /// The libcuda.so.1 the runtime will load; null unless it is the fake.
  static const FakeDriver *get() {
    static FakeDriver driver;
    static bool loaded = [] {
      void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!library)
        return false;
#define RECUR_FAKE(field, name) resolve(library, driver.field, name);
      RECUR_FAKE(liveAllocations, "fake_cuda_live_allocations")
      RECUR_FAKE(loadedModules, "fake_cuda_loaded_modules")
      RECUR_FAKE(launches, "fake_cuda_launches")
      RECUR_FAKE(foreignStreamUses, "fake_cuda_foreign_stream_uses")
      RECUR_FAKE(failAllocation, "fake_cuda_fail_allocation")
      RECUR_FAKE(faultAtLaunch, "fake_cuda_fault_at_launch")
      RECUR_FAKE(setCapability, "fake_cuda_set_capability")
      RECUR_FAKE(deviceAlloc, "fake_cuda_device_alloc")
      RECUR_FAKE(deviceFree, "fake_cuda_device_free")
      RECUR_FAKE(invalidFrees, "fake_cuda_invalid_frees")
      RECUR_FAKE(cooperativeLaunches, "fake_cuda_cooperative_launches")
      RECUR_FAKE(lastCooperativeGrid, "fake_cuda_last_cooperative_grid")
      RECUR_FAKE(setBlocksPerMultiprocessor,
                 "fake_cuda_set_blocks_per_multiprocessor")
#undef RECUR_FAKE
      return driver.setBlocksPerMultiprocessor != nullptr;
    }();
    return loaded ? &driver : nullptr;
  }
};

/// The fake cuBLASLt (fake-cuda/FakeCublasLt.cpp), which the runtime loads
/// as libcublasLt.so.13 from the same directory.
struct FakeCublasLt {
  int (*matmuls)() = nullptr;
  int (*lastComputeType)() = nullptr;
  void *(*lastStream)() = nullptr;
  int (*liveObjects)() = nullptr;

  static const FakeCublasLt *get() {
    static FakeCublasLt blas;
    static bool loaded = [] {
      void *library = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
      if (!library)
        return false;
      resolve(library, blas.matmuls, "fake_cublaslt_matmuls");
      resolve(library, blas.lastComputeType, "fake_cublaslt_last_compute_type");
      resolve(library, blas.lastStream, "fake_cublaslt_last_stream");
      resolve(library, blas.liveObjects, "fake_cublaslt_live_objects");
      return blas.liveObjects != nullptr;
    }();
    return loaded ? &blas : nullptr;
  }
};

constexpr int64_t kVocab = 11, kSeq = 3, kBatch = 2;

/// A two-layer LM of `hidden` units compiled for CUDA as `name`.
std::string compileCudaLm(int64_t hidden, const std::string &name) {
  mlir::MLIRContext context;
  mlir::recur::LstmLmConfig config;
  config.vocab = kVocab;
  config.embed = 4;
  config.hidden = hidden;
  config.layers = 2;
  auto module = mlir::recur::buildLstmLm(context, config);
  return compileToLibrary(*module, name, mlir::recur::Target::cuda);
}

/// A small LM compiled for CUDA, once per process.
const std::string &cudaModelPath() {
  static std::string path = compileCudaLm(5, "fake_cuda_lm");
  return path;
}

class FakeCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake = FakeDriver::get();
    ASSERT_NE(fake, nullptr)
        << "libcuda.so.1 is not the fake driver: run through ctest, which sets "
           "LD_LIBRARY_PATH to build/test/fake-cuda";
    ASSERT_FALSE(cudaModelPath().empty());
  }

  RecurModel *load() {
    RecurModel *model = nullptr;
    RecurError *error = recur_model_load(cudaModelPath().c_str(), &model);
    EXPECT_EQ(error, nullptr) << recur_error_message(error);
    return model;
  }

  void bindWeights(RecurModel *model) {
    for (size_t i = 0; i < recur_model_num_tensors(model, RECUR_WEIGHT); ++i) {
      RecurTensorInfo info;
      ASSERT_EQ(recur_model_tensor_info(model, RECUR_WEIGHT, i, &info),
                nullptr);
      HostTensor weight = randomFloats(
          std::vector<int64_t>(info.shape, info.shape + info.ndim), rng, 0.5f);
      DLTensor view = weight.view();
      ASSERT_EQ(recur_model_bind_weight(model, info.name, &view), nullptr);
    }
  }

  RecurError *run(RecurModel *model, const DLTensor *tokens,
                  DLManagedTensor **output) {
    *output = nullptr;
    return recur_model_run(model, &tokens, 1, output, 1);
  }

  const FakeDriver *fake = nullptr;
  std::mt19937_64 rng{3};
  HostTensor tokens = randomIds({kSeq, kBatch}, kVocab, rng);
};

TEST_F(FakeCudaTest, RunsOnTheModelsStreamAndReturnsDeviceOutputs) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  EXPECT_STREQ(recur_model_device(model), "Fake GPU (sm_90), device 0");
  EXPECT_EQ(recur_model_target(model), RECUR_TARGET_CUDA);
  EXPECT_GT(fake->loadedModules(), 0);
  bindWeights(model);
  int launchesBefore = fake->launches();
  DLTensor view = tokens.view();
  DLManagedTensor *logits;
  ASSERT_EQ(run(model, &view, &logits), nullptr);
  EXPECT_GT(fake->launches(), launchesBefore);
  EXPECT_EQ(fake->foreignStreamUses(), 0);
  EXPECT_EQ(logits->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(logits->dl_tensor.device.device_id, 0);
  EXPECT_EQ(logits->dl_tensor.ndim, 3);
  EXPECT_EQ(logits->dl_tensor.shape[0], kSeq);
  EXPECT_EQ(logits->dl_tensor.shape[1], kBatch);
  EXPECT_EQ(logits->dl_tensor.shape[2], kVocab);
  logits->deleter(logits);

  ASSERT_EQ(recur_model_set_host_outputs(model, 1), nullptr);
  ASSERT_EQ(run(model, &view, &logits), nullptr);
  EXPECT_EQ(logits->dl_tensor.device.device_type, kDLCPU);
  logits->deleter(logits);

  recur_model_free(model);
  EXPECT_EQ(fake->loadedModules(), 0);
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}

// Results that share a buffer (returned twice, merged by CSE) or that are an
// input or a weight: each output gets its own device allocation.
TEST_F(FakeCudaTest, AliasedOutputsEachOwnTheirBuffer) {
  static std::string path =
      compileToLibrary(readTestModel("aliased-outputs.mlir"),
                       "fake_cuda_aliased", mlir::recur::Target::cuda);
  ASSERT_FALSE(path.empty());
  RecurModel *model = nullptr;
  ASSERT_EQ(messageOf(recur_model_load(path.c_str(), &model)), "");
  bindWeights(model);
  HostTensor x = randomFloats({kSeq, kBatch, 4}, rng, 1.0f);
  DLTensor view = x.view();
  const DLTensor *inputs[] = {&view};
  int invalidBefore = fake->invalidFrees();
  for (int host = 0; host < 2; ++host) {
    ASSERT_EQ(recur_model_set_host_outputs(model, host), nullptr);
    DLManagedTensor *outputs[6] = {};
    ASSERT_EQ(messageOf(recur_model_run(model, inputs, 1, outputs, 6)), "");
    std::set<void *> buffers;
    for (DLManagedTensor *output : outputs)
      buffers.insert(output->dl_tensor.data);
    EXPECT_EQ(buffers.size(), 6u) << "outputs share a buffer";
    for (DLManagedTensor *output : outputs)
      output->deleter(output);
  }
  recur_model_free(model);
  EXPECT_EQ(fake->invalidFrees(), invalidBefore) << "a buffer was freed twice";
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}

// dlopen hands both models the same library (and module globals): the
// kernels are loaded once and unloaded with the last model.
TEST_F(FakeCudaTest, TwoModelsFromOneLibrary) {
  RecurModel *first = load(), *second = load();
  ASSERT_TRUE(first && second);
  int modules = fake->loadedModules();
  bindWeights(first);
  recur_model_free(second);
  EXPECT_EQ(fake->loadedModules(), modules);
  DLTensor view = tokens.view();
  DLManagedTensor *logits;
  ASSERT_EQ(run(first, &view, &logits), nullptr);
  logits->deleter(logits);
  recur_model_free(first);
  EXPECT_EQ(fake->loadedModules(), 0);
}

TEST_F(FakeCudaTest, OutOfMemoryIsAnErrorAndLeaksNothing) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  bindWeights(model);
  DLTensor view = tokens.view();
  for (int nth : {0, 2, 5}) {
    fake->failAllocation(nth);
    DLManagedTensor *logits;
    std::string message = messageOf(run(model, &view, &logits));
    EXPECT_THAT(message, HasSubstr("bytes of GPU memory for a model buffer "
                                   "failed: CUDA_ERROR_OUT_OF_MEMORY"));
    EXPECT_THAT(message, HasSubstr("MiB free on Fake GPU"));
    EXPECT_EQ(logits, nullptr);
  }
  fake->failAllocation(-1);
  recur_model_free(model);
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}

// A kernel that faults is reported by a later driver call; the message must
// not let the reader blame that call.
TEST_F(FakeCudaTest, KernelFaultsSayALaunchedKernelFaulted) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  bindWeights(model);
  DLTensor view = tokens.view();
  fake->faultAtLaunch(0);
  DLManagedTensor *logits;
  std::string message = messageOf(run(model, &view, &logits));
  EXPECT_THAT(message, HasSubstr("failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(message, HasSubstr("a kernel launched before this call faulted"));
  EXPECT_THAT(message, HasSubstr("run under compute-sanitizer"));
  EXPECT_THAT(message, HasSubstr("1 launched in this run"));
  EXPECT_EQ(logits, nullptr);
  fake->faultAtLaunch(-1);
  recur_model_free(model);
}

TEST_F(FakeCudaTest, DeviceInputsAreCheckedWhereTheyLive) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  bindWeights(model);
  auto *device = static_cast<int64_t *>(
      fake->deviceAlloc(tokens.ids.size() * sizeof(int64_t)));
  std::memcpy(device, tokens.ids.data(), tokens.ids.size() * sizeof(int64_t));
  DLTensor view = tokens.view();
  view.data = device;
  view.device = {kDLCUDA, 0};
  DLManagedTensor *logits;
  ASSERT_EQ(run(model, &view, &logits), nullptr);
  logits->deleter(logits);

  device[4] = kVocab;
  EXPECT_THAT(messageOf(run(model, &view, &logits)),
              HasSubstr("input 'tokens' holds 11 at flat index 4; values must "
                        "lie in [0, 11)"));
  view.device = {kDLCUDA, 1};
  EXPECT_THAT(messageOf(run(model, &view, &logits)),
              HasSubstr("input 'tokens' is on CUDA device 1; the model runs on "
                        "Fake GPU (sm_90), device 0"));
  view.device = {kDLOpenCL, 0};
  EXPECT_THAT(messageOf(run(model, &view, &logits)),
              HasSubstr("a CUDA model takes host or CUDA tensors"));
  fake->deviceFree(device);
  recur_model_free(model);
}

TEST_F(FakeCudaTest, UnboundWeightsAreReportedBeforeAnyLaunch) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  int launchesBefore = fake->launches();
  DLTensor view = tokens.view();
  DLManagedTensor *logits;
  EXPECT_THAT(messageOf(run(model, &view, &logits)),
              HasSubstr("weight 'embedding.weight' is not bound"));
  EXPECT_EQ(fake->launches(), launchesBefore);
  recur_model_free(model);
}

// The stacked recurrence is one persistent kernel (recur-gpu-persistent-
// kernels): one cooperative launch whatever the sequence length, so a
// forward's launch count does not grow with T.
TEST_F(FakeCudaTest, LaunchesDoNotGrowWithTheSequence) {
  RecurModel *model = load();
  ASSERT_NE(model, nullptr);
  bindWeights(model);
  EXPECT_STREQ(recur_model_run_report(model), "");
  // The first run also computes the tensors derived from the weights.
  DLTensor warmUp = tokens.view();
  DLManagedTensor *logits;
  ASSERT_EQ(messageOf(run(model, &warmUp, &logits)), "");
  logits->deleter(logits);
  std::vector<int> launches;
  for (int64_t seq : {1, 4, 17}) {
    HostTensor ids = randomIds({seq, kBatch}, kVocab, rng);
    DLTensor view = ids.view();
    int before = fake->launches(),
        cooperativeBefore = fake->cooperativeLaunches();
    ASSERT_EQ(messageOf(run(model, &view, &logits)), "");
    logits->deleter(logits);
    launches.push_back(fake->launches() - before);
    EXPECT_EQ(fake->cooperativeLaunches() - cooperativeBefore, 1)
        << "T=" << seq;
    // A block per group of units (2 layers of 5 groups of one unit).
    EXPECT_THAT(recur_model_run_report(model),
                HasSubstr(" kernel launches; recur_persistent_forward_0: 1 "
                          "cooperative launch of 8 blocks x 256 threads "
                          "(asked for 10; 2 per multiprocessor x 4 fit)"));
  }
  EXPECT_EQ(launches[0], launches[1]);
  EXPECT_EQ(launches[0], launches[2]);
  EXPECT_LT(launches[0], 20);
  recur_model_free(model);
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}

// A persistent kernel asks for a block per tile of its largest parallel loop
// (here the step's groups of units, recur-gpu-stationary-weights: 2 layers x
// 160 / 8 = 40); the runtime launches at most as many blocks as are resident
// at once (2 per multiprocessor x 4 on the fake device), and refuses a
// kernel of which not one block fits.
TEST_F(FakeCudaTest, PersistentGridIsWhatFitsOnTheDevice) {
  static std::string path = compileCudaLm(160, "fake_cuda_wide_lm");
  ASSERT_FALSE(path.empty());
  RecurModel *model = nullptr;
  ASSERT_EQ(messageOf(recur_model_load(path.c_str(), &model)), "");
  bindWeights(model);
  HostTensor ids = randomIds({3, 8}, kVocab, rng);
  DLTensor view = ids.view();
  DLManagedTensor *logits;
  ASSERT_EQ(messageOf(run(model, &view, &logits)), "");
  logits->deleter(logits);
  EXPECT_EQ(fake->lastCooperativeGrid(), 8);
  EXPECT_THAT(recur_model_run_report(model),
              HasSubstr("recur_persistent_forward_0: 1 cooperative launch of "
                        "8 blocks x 256 threads (asked for 40; 2 per "
                        "multiprocessor x 4 fit), so each block runs several "
                        "blocks' work, and an LSTM step's blocks reload their "
                        "groups' weights into shared memory at every step"));

  fake->setBlocksPerMultiprocessor(0);
  EXPECT_THAT(messageOf(run(model, &view, &logits)),
              HasSubstr("launching recur_persistent_forward_0: not one block "
                        "of 256 threads fits on a multiprocessor of Fake GPU "
                        "(sm_90), device 0 (registers or shared memory)"));
  fake->setBlocksPerMultiprocessor(2);
  recur_model_free(model);
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}

// The driver reads the device once per process: ctest runs this test in its
// own process.
TEST_F(FakeCudaTest, OlderGpuThanTheCubinIsRefused) {
  fake->setCapability(80);
  RecurModel *model = nullptr;
  std::string message =
      messageOf(recur_model_load(cudaModelPath().c_str(), &model));
  if (message.find("") == 0) {
    recur_model_free(model);
    GTEST_SKIP() << "the driver was initialized earlier in this process";
  }
  EXPECT_THAT(message, HasSubstr("was compiled for sm_90 but Fake GPU (sm_80), "
                                 "device 0 is older: recompile with "
                                 "recur-compile --cuda-arch=sm_80"));
  EXPECT_EQ(model, nullptr);
}

} // namespace

// --gemm=cublaslt: the projection is one library call, c += x w^T, on the
// model's stream, described to cuBLASLt's column-major convention well
// enough that the fake (which refuses layouts that do not fit) computes it.
// Kernels are counted, not run, and fresh fake memory is zero, so the output
// holds the library's product alone: the bias-free projection.
constexpr char kProjection[] = R"mlir(
func.func @forward(%x: tensor<?x?x5xf32> {recur.input = "x"},
                   %w: tensor<7x5xf32> {recur.weight = "proj.weight"})
    -> (tensor<?x?x7xf32> {recur.output = "y"}) {
  %y = recur.linear %x, %w : (tensor<?x?x5xf32>, tensor<7x5xf32>) -> tensor<?x?x7xf32>
  return %y : tensor<?x?x7xf32>
}
)mlir";

std::string compileProjection(const std::string &precision) {
  mlir::recur::CompileOptions options;
  options.target = mlir::recur::Target::cuda;
  options.gemm = mlir::recur::GemmLowering::cublaslt;
  options.precision = mlir::recur::symbolizePrecision(precision);
  return compileToLibrary(kProjection, "fake_cuda_cublaslt_" + precision,
                          options);
}

TEST_F(FakeCudaTest, LibraryGemmsRunOnCublasLtOnTheModelsStream) {
  const FakeCublasLt *blas = FakeCublasLt::get();
  ASSERT_NE(blas, nullptr) << "libcublasLt.so.13 is not the fake";
  for (auto [precision, computeType] :
       {std::pair<std::string, int>{"fp32", 68}, {"tf32", 77}}) {
    SCOPED_TRACE(precision);
    std::string path = compileProjection(precision);
    ASSERT_FALSE(path.empty());
    RecurModel *model = nullptr;
    ASSERT_EQ(messageOf(recur_model_load(path.c_str(), &model)), "");
    HostTensor w = randomFloats({7, 5}, rng, 1.0f);
    HostTensor x = randomFloats({kSeq, kBatch, 5}, rng, 1.0f);
    DLTensor wView = w.view(), xView = x.view();
    ASSERT_EQ(recur_model_bind_weight(model, "proj.weight", &wView), nullptr);
    ASSERT_EQ(recur_model_set_host_outputs(model, 1), nullptr);
    const DLTensor *inputs[] = {&xView};
    DLManagedTensor *y = nullptr;
    int before = blas->matmuls();
    ASSERT_EQ(messageOf(recur_model_run(model, inputs, 1, &y, 1)), "");
    EXPECT_EQ(blas->matmuls(), before + 1);
    EXPECT_EQ(blas->lastComputeType(), computeType);
    EXPECT_EQ(blas->lastStream(), reinterpret_cast<void *>(0x5eed))
        << "not the fake driver's stream, the model's";
    EXPECT_THAT(recur_model_run_report(model),
                HasSubstr("1 GEMM by cuBLASLt 130000"));
    ASSERT_EQ(y->dl_tensor.ndim, 3);
    EXPECT_EQ(y->dl_tensor.shape[2], 7);
    const auto *values = static_cast<const float *>(y->dl_tensor.data);
    for (int64_t row = 0; row < kSeq * kBatch; ++row)
      for (int64_t column = 0; column < 7; ++column) {
        double want = 0;
        for (int64_t k = 0; k < 5; ++k)
          want += double(x.floats[row * 5 + k]) * w.floats[column * 5 + k];
        EXPECT_NEAR(values[row * 7 + column], want, 1e-5)
            << "row " << row << ", column " << column;
      }
    y->deleter(y);
    recur_model_free(model);
    EXPECT_EQ(blas->liveObjects(), 0) << "cuBLASLt handles or plans leaked";
    EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
  }
}

TEST_F(FakeCudaTest, MissingCublasLtIsAnErrorNamingTheWayOut) {
  if (dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD))
    GTEST_SKIP() << "cuBLASLt was loaded earlier in this process";
  std::string path = compileProjection("fp32");
  ASSERT_FALSE(path.empty());
  setenv("RECUR_CUBLASLT_PATH", "/nonexistent/libcublasLt.so.13", 1);
  RecurModel *model = nullptr;
  std::string message = messageOf(recur_model_load(path.c_str(), &model));
  unsetenv("RECUR_CUBLASLT_PATH");
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(message, HasSubstr("runs its GEMMs with cuBLASLt (recur-compile "
                                 "--gemm=cublaslt), which cannot be loaded"));
  EXPECT_THAT(message, HasSubstr("/nonexistent/libcublasLt.so.13"));
  EXPECT_THAT(message, HasSubstr("RECUR_CUBLASLT_PATH"));
  EXPECT_THAT(message, HasSubstr("recompile with --gemm=generated"));
  EXPECT_EQ(fake->liveAllocations(), 0) << "device memory leaked";
}
