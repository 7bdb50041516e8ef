//===- RuntimeTest.cpp - librecur-runtime's errors ------------------------===//
//
// Every way a caller can get it wrong gets an error value naming the tensor,
// the expected and the actual, and leaves the model usable.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"
#include "Safetensors.h"

#include "recur/Gen/ModelGen.h"

#include "mlir/IR/MLIRContext.h"
#include "gmock/gmock.h"

#include <fstream>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace recur::testing;
using ::testing::HasSubstr;

namespace {

/// One small LM (vocab 11, embed 4, hidden 6, 2 layers, dynamic T/B) shared
/// by the tests; compiled once.
class RuntimeTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    mlir::MLIRContext context;
    mlir::recur::LstmLmConfig config;
    config.vocab = 11;
    config.embed = 4;
    config.hidden = 6;
    config.layers = 2;
    auto module = mlir::recur::buildLstmLm(context, config);
    libraryPath = new std::string(compileToLibrary(*module, "runtime_lm"));
  }
  static void TearDownTestSuite() { delete libraryPath; }

  void SetUp() override {
    ASSERT_FALSE(libraryPath->empty());
    ASSERT_EQ(messageOf(recur_model_load(libraryPath->c_str(), &model)), "");
  }
  void TearDown() override { recur_model_free(model); }

  /// A safetensors file holding every weight of the model (random values);
  /// `edit` may change the writer's content by name before writing.
  std::string writeWeights(const std::string &name,
                           const std::string &skip = "",
                           const std::string &wrongShape = "",
                           const std::string &wrongDtype = "",
                           const std::string &prefix = "",
                           const std::string &extra = "") {
    recur::safetensors::Writer writer;
    std::mt19937_64 rng(3);
    for (size_t i = 0; i < recur_model_num_tensors(model, RECUR_WEIGHT); ++i) {
      RecurTensorInfo info;
      recur_model_tensor_info(model, RECUR_WEIGHT, i, &info);
      if (info.name == skip)
        continue;
      std::vector<int64_t> shape(info.shape, info.shape + info.ndim);
      if (info.name == wrongShape)
        shape.back() += 1;
      HostTensor tensor = randomFloats(shape, rng, 0.5f);
      std::string error;
      std::string stored = prefix + info.name;
      if (info.name == wrongDtype) {
        std::vector<double> doubles(tensor.floats.begin(), tensor.floats.end());
        EXPECT_TRUE(writer.add(stored, "F64", shape, doubles.data(),
                               doubles.size() * 8, error));
      } else {
        EXPECT_TRUE(writer.add(stored, "F32", shape, tensor.floats.data(),
                               tensor.floats.size() * 4, error));
      }
    }
    if (!extra.empty()) {
      float value = 1;
      std::string error;
      EXPECT_TRUE(writer.add(extra, "F32", {1}, &value, 4, error));
    }
    std::string path = ::testing::TempDir() + "/" + name + ".safetensors";
    std::string error;
    EXPECT_TRUE(writer.write(path, error)) << error;
    return path;
  }

  std::string bindFile(const std::string &path) {
    return messageOf(recur_model_bind_weights_file(model, path.c_str()));
  }

  std::string run(HostTensor tokens) {
    DLTensor view = tokens.view();
    const DLTensor *inputs[] = {&view};
    DLManagedTensor *output = nullptr;
    std::string message =
        messageOf(recur_model_run(model, inputs, 1, &output, 1));
    if (output)
      output->deleter(output);
    return message;
  }

  HostTensor tokens(int64_t seq = 3, int64_t batch = 2) {
    std::mt19937_64 rng(1);
    return randomIds({seq, batch}, 11, rng);
  }

  static std::string *libraryPath;
  RecurModel *model = nullptr;
};

std::string *RuntimeTest::libraryPath = nullptr;

TEST_F(RuntimeTest, DescribesTheModel) {
  EXPECT_EQ(recur_model_target(model), RECUR_TARGET_CPU);
  EXPECT_STREQ(recur_model_device(model), "cpu");
  ASSERT_EQ(recur_model_num_tensors(model, RECUR_INPUT), 1u);
  ASSERT_EQ(recur_model_num_tensors(model, RECUR_WEIGHT), 11u);
  ASSERT_EQ(recur_model_num_tensors(model, RECUR_OUTPUT), 1u);
  RecurTensorInfo info;
  ASSERT_EQ(messageOf(recur_model_tensor_info(model, RECUR_INPUT, 0, &info)),
            "");
  EXPECT_STREQ(info.name, "tokens");
  EXPECT_EQ(info.dtype.code, kDLInt);
  EXPECT_EQ(info.dtype.bits, 64);
  ASSERT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_STREQ(info.dims[0], "T");
  EXPECT_STREQ(info.dims[1], "B");
  EXPECT_EQ(info.index_bound, 11);
  ASSERT_EQ(messageOf(recur_model_tensor_info(model, RECUR_WEIGHT, 2, &info)),
            "");
  EXPECT_STREQ(info.name, "lstm.weight_hh_l0");
  EXPECT_EQ(std::vector<int64_t>(info.shape, info.shape + 2),
            (std::vector<int64_t>{24, 6}));
  ASSERT_EQ(messageOf(recur_model_tensor_info(model, RECUR_OUTPUT, 0, &info)),
            "");
  EXPECT_STREQ(info.name, "logits");
  EXPECT_THAT(
      messageOf(recur_model_tensor_info(model, RECUR_OUTPUT, 1, &info)),
      HasSubstr("index 1 is out of range; the model has 1 such tensors"));
}

TEST_F(RuntimeTest, RunsAfterBindingAFile) {
  EXPECT_EQ(bindFile(writeWeights("complete")), "");
  EXPECT_EQ(run(tokens()), "");
}

TEST_F(RuntimeTest, UnboundWeight) {
  EXPECT_THAT(run(tokens()),
              HasSubstr("weight 'embedding.weight' is not bound"));
}

TEST_F(RuntimeTest, WeightMissingFromFile) {
  std::string path = writeWeights("missing", /*skip=*/"proj.bias");
  EXPECT_EQ(bindFile(path),
            "'" + path +
                "' does not fit the model's weights; missing: proj.bias");
  // All or nothing: nothing was bound.
  EXPECT_THAT(run(tokens()), HasSubstr("is not bound"));
}

// Strict by default, as load_state_dict: a bidirectional LSTM's *_reverse
// tensors must not be dropped silently.
TEST_F(RuntimeTest, UnexpectedWeightInFile) {
  std::string path =
      writeWeights("unexpected", "", "", "", "", "lstm.weight_ih_l0_reverse");
  EXPECT_EQ(bindFile(path),
            "'" + path +
                "' does not fit the model's weights; "
                "unexpected: lstm.weight_ih_l0_reverse; "
                "non-strict binding ignores unexpected tensors");
  EXPECT_THAT(run(tokens()), HasSubstr("is not bound"));
  EXPECT_EQ(messageOf(recur_model_bind_weights_file_mode(
                model, path.c_str(), RECUR_BIND_NON_STRICT)),
            "");
  EXPECT_EQ(run(tokens()), "");
}

TEST_F(RuntimeTest, PrefixedNamesGetAHint) {
  std::string path = writeWeights("prefixed", "", "", "", "model.");
  std::string message = bindFile(path);
  EXPECT_THAT(message, HasSubstr("missing: embedding.weight, "));
  EXPECT_THAT(message,
              HasSubstr("and 5 more; unexpected: model.embedding.weight"));
  EXPECT_THAT(message, HasSubstr("did you mean 'model.embedding.weight' for "
                                 "'embedding.weight'"));
}

TEST_F(RuntimeTest, NonStrictBindsWhatIsThere) {
  std::string path = writeWeights("partial", /*skip=*/"proj.bias");
  EXPECT_EQ(messageOf(recur_model_bind_weights_file_mode(
                model, path.c_str(), RECUR_BIND_NON_STRICT)),
            "");
  EXPECT_THAT(run(tokens()), HasSubstr("weight 'proj.bias' is not bound"));
  std::string wrong = writeWeights("partial-wrong", "proj.bias", "proj.weight");
  EXPECT_THAT(messageOf(recur_model_bind_weights_file_mode(
                  model, wrong.c_str(), RECUR_BIND_NON_STRICT)),
              HasSubstr("weight 'proj.weight' in '" + wrong + "' has shape"));
  EXPECT_THAT(
      messageOf(recur_model_bind_weights_file_mode(model, path.c_str(), 7)),
      HasSubstr("unknown mode 7"));
}

TEST_F(RuntimeTest, TorchSaveFileIsNamed) {
  std::string path = ::testing::TempDir() + "/state_dict.pt";
  std::ofstream(path) << std::string("PK\x03\x04", 4) << "archive/data.pkl";
  EXPECT_THAT(bindFile(path), HasSubstr("is a zip archive, as torch.save "
                                        "writes, not safetensors"));
  std::ofstream(path) << std::string("\x80\x02}q\x00(X\x06\x00\x00\x00weight",
                                     16);
  EXPECT_THAT(bindFile(path), HasSubstr("is a Python pickle"));
}

// Shapes whose element count overflows must not pass for small buffers.
TEST_F(RuntimeTest, OverflowingShapes) {
  ASSERT_EQ(bindFile(writeWeights("overflow")), "");
  HostTensor ids = tokens();
  DLTensor view = ids.view();
  int64_t huge[] = {int64_t(1) << 32, int64_t(1) << 32};
  view.shape = huge;
  const DLTensor *inputs[] = {&view};
  DLManagedTensor *output = nullptr;
  EXPECT_THAT(messageOf(recur_model_run(model, inputs, 1, &output, 1)),
              HasSubstr("input 'tokens' has shape [4294967296, 4294967296], "
                        "whose element count does not fit in 64 bits"));
  int64_t bytesOverflow[] = {int64_t(1) << 31, int64_t(1) << 30};
  view.shape = bytesOverflow;
  EXPECT_THAT(messageOf(recur_model_run(model, inputs, 1, &output, 1)),
              HasSubstr("whose size in bytes does not fit in 64 bits"));
  EXPECT_EQ(output, nullptr);
  EXPECT_EQ(run(tokens()), "");
}

TEST_F(RuntimeTest, WeightWithWrongShapeInFile) {
  std::string path = writeWeights("shape", "", /*wrongShape=*/"proj.weight");
  EXPECT_THAT(bindFile(path),
              HasSubstr("weight 'proj.weight' in '" + path +
                        "' has shape [11, 7], expected [11, 6]"));
}

TEST_F(RuntimeTest, WeightWithWrongDtypeInFile) {
  std::string path = writeWeights("dtype", "", "", /*wrongDtype=*/"proj.bias");
  EXPECT_THAT(bindFile(path), HasSubstr("weight 'proj.bias' in '" + path +
                                        "' has dtype F64, expected F32"));
}

TEST_F(RuntimeTest, WeightWithWrongShapeOrDtypeByDLPack) {
  std::mt19937_64 rng(2);
  HostTensor weight = randomFloats({11, 5}, rng, 1.0f);
  DLTensor view = weight.view();
  EXPECT_EQ(messageOf(recur_model_bind_weight(model, "proj.weight", &view)),
            "weight 'proj.weight' has shape [11, 5], expected [11, 6]");
  HostTensor ids = randomIds({11, 6}, 3, rng);
  view = ids.view();
  EXPECT_EQ(messageOf(recur_model_bind_weight(model, "proj.weight", &view)),
            "weight 'proj.weight' has dtype i64, expected f32");
  EXPECT_EQ(messageOf(recur_model_bind_weight(model, "decoder.weight", &view)),
            "the model has no weight 'decoder.weight'");
}

TEST_F(RuntimeTest, TruncatedWeightsFile) {
  std::string complete = writeWeights("whole");
  std::ifstream in(complete, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::string path = ::testing::TempDir() + "/truncated.safetensors";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  EXPECT_THAT(bindFile(path), HasSubstr("file truncated?"));
  std::ofstream(path, std::ios::binary) << bytes.substr(0, 5);
  EXPECT_THAT(bindFile(path), HasSubstr("is truncated"));
}

TEST_F(RuntimeTest, CorruptWeightsFile) {
  std::string path = ::testing::TempDir() + "/corrupt.safetensors";
  std::string header = "{\"a\": [1, 2";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  std::ofstream(path, std::ios::binary) << bytes << header;
  EXPECT_THAT(bindFile(path), HasSubstr("has a corrupt header"));
  EXPECT_THAT(bindFile(::testing::TempDir() + "/absent.safetensors"),
              HasSubstr("cannot read safetensors file"));
}

TEST_F(RuntimeTest, InputErrors) {
  ASSERT_EQ(bindFile(writeWeights("inputs")), "");
  HostTensor wrongRank = tokens();
  wrongRank.shape = {6};
  EXPECT_EQ(run(wrongRank), "input 'tokens' has shape [6], expected [T, B]");

  HostTensor floats;
  floats.shape = {3, 2};
  floats.floats.assign(6, 0.0f);
  EXPECT_EQ(run(floats), "input 'tokens' has dtype f32, expected i64");

  HostTensor empty = tokens(0, 2);
  EXPECT_EQ(run(empty), "input 'tokens' has T = 0; T must be at least 1");

  HostTensor outOfRange = tokens();
  outOfRange.ids[4] = 11;
  EXPECT_EQ(run(outOfRange), "input 'tokens' holds 11 at flat index 4; "
                             "values must lie in [0, 11)");

  HostTensor strided = tokens(3, 2);
  DLTensor view = strided.view();
  int64_t strides[] = {1, 3};
  view.strides = strides;
  const DLTensor *inputs[] = {&view};
  DLManagedTensor *output = nullptr;
  EXPECT_THAT(messageOf(recur_model_run(model, inputs, 1, &output, 1)),
              HasSubstr("input 'tokens' is not contiguous (strides [1, 3])"));

  view = strided.view();
  view.device = {kDLCUDA, 0};
  EXPECT_THAT(messageOf(recur_model_run(model, inputs, 1, &output, 1)),
              HasSubstr("input 'tokens' is in CUDA memory; this model runs on "
                        "the CPU and needs host memory"));
  EXPECT_EQ(messageOf(recur_model_run(model, inputs, 2, &output, 1)),
            "the model takes 1 input(s) (tokens), got 2");
  EXPECT_EQ(output, nullptr);
  // Still usable after all that.
  EXPECT_EQ(run(tokens()), "");
}

TEST_F(RuntimeTest, ThreadCount) {
  EXPECT_EQ(messageOf(recur_model_set_threads(model, 0)),
            "thread count must be between 1 and 1024, got 0");
  // libomp aborts the process when it cannot make the threads.
  EXPECT_EQ(messageOf(recur_model_set_threads(model, 100000)),
            "thread count must be between 1 and 1024, got 100000");
  EXPECT_EQ(messageOf(recur_model_set_threads(model, 1)), "");
  ASSERT_EQ(bindFile(writeWeights("threads")), "");
  EXPECT_EQ(run(tokens()), "");
}

/// Bytes of the C heap in use, small and mmap'd chunks alike.
size_t heapInUse() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

/// The process's address space now, in bytes.
size_t addressSpace() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

TEST_F(RuntimeTest, OutOfMemoryFreesTheRunsBuffers) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
#endif
  ASSERT_EQ(bindFile(writeWeights("oom")), "");
  // The weight prologue and the threads are set up by a first run.
  ASSERT_EQ(run(tokens()), "");
  // 2M tokens: the 32 MB embedding output fits in 150 MB more address
  // space, the 192 MB of input gates that follow do not.
  HostTensor many = tokens(2000, 1000);
  size_t before = heapInUse();
  rlimit original;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &original), 0);
  rlimit limited = original;
  limited.rlim_cur = addressSpace() + (150u << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  std::string message = run(many);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &original), 0);
  EXPECT_THAT(message,
              HasSubstr("out of memory: the model could not allocate"));
  // Without tracking, the embedding output allocated before the failure
  // would stay allocated.
  EXPECT_LT(heapInUse(), before + (1u << 20));
  // Still usable.
  EXPECT_EQ(run(tokens()), "");
}

TEST(RuntimeLoadTest, NotARecurModel) {
  RecurModel *model = nullptr;
  EXPECT_THAT(messageOf(recur_model_load("libm.so.6", &model)),
              HasSubstr("cannot load model 'libm.so.6'"));
  std::string path = ::testing::TempDir() + "/not-a-library.so";
  std::ofstream(path) << "not an ELF file";
  EXPECT_THAT(messageOf(recur_model_load(path.c_str(), &model)),
              HasSubstr("cannot load model '" + path + "'"));
  EXPECT_THAT(messageOf(recur_model_load(RECUR_RUNTIME_LIBRARY, &model)),
              HasSubstr("is not a Recur model: it does not export "
                        "recur_compiled_model_description"));
  EXPECT_EQ(model, nullptr);
}

} // namespace
