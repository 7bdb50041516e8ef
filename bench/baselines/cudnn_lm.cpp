//===- cudnn_lm.cpp - the LSTM LM through cuDNN and cuBLASLt (baseline) ---===//
//
//   bench-cudnn-lm --weights w.safetensors --inputs in.safetensors
//                  --outputs out.safetensors [--warmup K] [--iters N]
//                  [--precision fp32|tf32]
//
// The embedding is gathered by a small kernel, the stacked LSTM is one
// cudnnRNNForward (inference mode), the projection one cuBLASLt matmul with
// the bias in its epilogue. Weights are packed from PyTorch's layout into
// cuDNN's weight space the way PyTorch's cuDNN path does: cuDNN's linear
// layers 0-3 are W_ih's gates (i, f, g, o), 4-7 W_hh's, each [H, in]
// row-major, biases alike. Inputs and outputs stay on the device while timed.
// fp32 forbids TF32 (CUDNN_FMA_MATH, CUBLAS_COMPUTE_32F), as PyTorch does
// with allow_tf32 off.
//
// cuDNN and cuBLAS are linked dynamically; on the GPU machine they come from
// PyTorch's wheels (bench/run puts site-packages/nvidia/*/lib on
// LD_LIBRARY_PATH). The CUDA runtime is linked statically.
//
//===----------------------------------------------------------------------===//

#include "Baseline.h"
#include "cudnn_kernels.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr const char *kUsage =
    "usage: bench-cudnn-lm --weights w.safetensors --inputs in.safetensors\n"
    "                      --outputs out.safetensors [--warmup K] [--iters N]\n"
    "                      [--precision fp32|tf32]\n"
    "Runs the model of the weights (an LSTM LM or a bare stacked LSTM) with\n"
    "cuDNN and prints {\"times_ms\": [...], ...} as JSON.\n";

void check(cudaError_t status, const char *call) {
  if (status != cudaSuccess)
    bench::die(std::string(call) + ": " + cudaGetErrorString(status));
}
void check(cudnnStatus_t status, const char *call) {
  if (status != CUDNN_STATUS_SUCCESS)
    bench::die(std::string(call) + ": " + cudnnGetErrorString(status));
}
void check(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    bench::die(std::string(call) + ": cuBLAS status " + std::to_string(status));
}
#define CHECK(call) check((call), #call)

/// A device buffer of `count` elements of T.
template <typename T> struct Buffer {
  T *data = nullptr;
  size_t count = 0;
  explicit Buffer(size_t count) : count(count) {
    CHECK(cudaMalloc(reinterpret_cast<void **>(&data), bytes()));
  }
  Buffer(const Buffer &) = delete;
  ~Buffer() { cudaFree(data); }
  size_t bytes() const { return count * sizeof(T); }
  void upload(const std::vector<T> &host) {
    CHECK(cudaMemcpy(data, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
};

/// logits [N, V] = y [N, H] · weightᵀ + bias, in column-major terms
/// logitsᵀ (V×N) = weight (V×H, stored H×V) ᵀ · yᵀ (H×N).
struct Projection {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  Buffer<char> workspace{32 << 20};

  Projection(int64_t n, int64_t h, int64_t v, const float *bias, bool tf32) {
    CHECK(cublasLtCreate(&handle));
    CHECK(cublasLtMatmulDescCreate(
        &op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t transpose = CUBLAS_OP_T;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                         sizeof(transpose)));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof(epilogue)));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                         sizeof(bias)));
    CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, h, v, h));
    CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, h, n, h));
    CHECK(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, v, n, v));
    cublasLtMatmulPreference_t preference;
    CHECK(cublasLtMatmulPreferenceCreate(&preference));
    size_t limit = workspace.bytes();
    CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)));
    int found = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, c, c, preference, 1, &algo,
                                         &found));
    cublasLtMatmulPreferenceDestroy(preference);
    if (found == 0)
      bench::die("cuBLASLt found no algorithm for the projection");
  }

  void run(const float *weight, const float *y, float *logits, cudaStream_t stream) {
    float one = 1, zero = 0;
    CHECK(cublasLtMatmul(handle, op, &one, weight, a, y, b, &zero, logits, c, logits, c,
                         &algo.algo, workspace.data, workspace.bytes(), stream));
  }
};

} // namespace

int main(int argc, char **argv) {
  bench::Options options = bench::parseOptions(argc, argv, kUsage);
  if (options.precision != "fp32" && options.precision != "tf32")
    bench::unavailable("the cuDNN baseline runs fp32 and tf32 only");
  int devices = 0;
  cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0)
    bench::unavailable(std::string("no CUDA device (") +
                       (probe != cudaSuccess ? cudaGetErrorString(probe) : "none found") +
                       ")");
  bench::Model model = bench::Model::load(options);
  bool tf32 = options.precision == "tf32";
  auto setupStart = std::chrono::steady_clock::now();
  size_t freeBefore, total;
  CHECK(cudaMemGetInfo(&freeBefore, &total));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t cudnn;
  CHECK(cudnnCreate(&cudnn));
  CHECK(cudnnSetStream(cudnn, stream));

  int T = model.seq, B = model.batch, H = model.hidden, I = model.inputSize;
  int L = model.layers.size();
  cudnnRNNDescriptor_t rnn;
  CHECK(cudnnCreateRNNDescriptor(&rnn));
  CHECK(cudnnSetRNNDescriptor_v8(
      rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
      CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
      tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH, I, H, H, L, nullptr,
      CUDNN_RNN_PADDED_IO_DISABLED));

  std::vector<int> lengths(B, T);
  Buffer<int> deviceLengths(B);
  deviceLengths.upload(lengths);
  cudnnRNNDataDescriptor_t xDesc, yDesc;
  CHECK(cudnnCreateRNNDataDescriptor(&xDesc));
  CHECK(cudnnCreateRNNDataDescriptor(&yDesc));
  CHECK(cudnnSetRNNDataDescriptor(xDesc, CUDNN_DATA_FLOAT,
                                  CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, I,
                                  lengths.data(), nullptr));
  CHECK(cudnnSetRNNDataDescriptor(yDesc, CUDNN_DATA_FLOAT,
                                  CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, H,
                                  lengths.data(), nullptr));
  cudnnTensorDescriptor_t hDesc;
  CHECK(cudnnCreateTensorDescriptor(&hDesc));
  int hDims[3] = {L, B, H}, hStrides[3] = {B * H, H, 1};
  CHECK(cudnnSetTensorNdDescriptor(hDesc, CUDNN_DATA_FLOAT, 3, hDims, hStrides));

  // Weights: each PyTorch gate block [H, in] into its slot of the weight space.
  size_t weightBytes, workBytes, reserveBytes;
  CHECK(cudnnGetRNNWeightSpaceSize(cudnn, rnn, &weightBytes));
  Buffer<char> weights(weightBytes);
  CHECK(cudnnGetRNNTempSpaceSizes(cudnn, rnn, CUDNN_FWD_MODE_INFERENCE, xDesc, &workBytes,
                                  &reserveBytes));
  Buffer<char> work(workBytes);
  cudnnTensorDescriptor_t mDesc, bDesc;
  CHECK(cudnnCreateTensorDescriptor(&mDesc));
  CHECK(cudnnCreateTensorDescriptor(&bDesc));
  for (int l = 0; l < L; ++l) {
    const bench::LstmLayer &layer = model.layers[l];
    for (int id = 0; id < 8; ++id) {
      bool recurrent = id >= 4;
      int gate = id % 4, in = recurrent ? H : (l == 0 ? I : H);
      void *matrix, *bias;
      CHECK(cudnnGetRNNWeightParams(cudnn, rnn, l, weightBytes, weights.data, id, mDesc,
                                    &matrix, bDesc, &bias));
      cudnnDataType_t type;
      int rank, dims[3], strides[3];
      CHECK(cudnnGetTensorNdDescriptor(mDesc, 3, &type, &rank, dims, strides));
      if (static_cast<int64_t>(dims[0]) * dims[1] * dims[2] != int64_t(H) * in)
        bench::die("cuDNN's matrix " + std::to_string(id) + " of layer " +
                   std::to_string(l) + " is not [" + std::to_string(H) + ", " +
                   std::to_string(in) + "]");
      const bench::Tensor &w = recurrent ? layer.wHh : layer.wIh;
      const bench::Tensor &b = recurrent ? layer.bHh : layer.bIh;
      CHECK(cudaMemcpy(matrix, w.data.data() + int64_t(gate) * H * in,
                       sizeof(float) * H * in, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(bias, b.data.data() + int64_t(gate) * H, sizeof(float) * H,
                       cudaMemcpyHostToDevice));
    }
  }

  int64_t N = int64_t(T) * B, V = model.vocab;
  Buffer<float> x(N * I), y(N * H);
  std::unique_ptr<Buffer<float>> embedding, projWeight, projBias, logits;
  std::unique_ptr<Buffer<int64_t>> tokens;
  std::unique_ptr<Projection> projection;
  if (model.languageModel) {
    embedding = std::make_unique<Buffer<float>>(model.embedding.data.size());
    embedding->upload(model.embedding.data);
    tokens = std::make_unique<Buffer<int64_t>>(model.tokens.size());
    tokens->upload(model.tokens);
    projWeight = std::make_unique<Buffer<float>>(model.projWeight.data.size());
    projWeight->upload(model.projWeight.data);
    projBias = std::make_unique<Buffer<float>>(model.projBias.data.size());
    projBias->upload(model.projBias.data);
    logits = std::make_unique<Buffer<float>>(N * V);
    projection = std::make_unique<Projection>(N, H, V, projBias->data, tf32);
  } else {
    x.upload(model.input.data);
  }
  CHECK(cudaDeviceSynchronize());
  double setupSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - setupStart)
                            .count();

  auto batch = [&] {
    if (model.languageModel)
      CHECK(benchGatherRows(embedding->data, tokens->data, x.data, N, I, stream));
    CHECK(cudnnRNNForward(cudnn, rnn, CUDNN_FWD_MODE_INFERENCE, deviceLengths.data, xDesc,
                          x.data, yDesc, y.data, hDesc, nullptr, nullptr, hDesc, nullptr,
                          nullptr, weightBytes, weights.data, workBytes, work.data, 0,
                          nullptr));
    if (projection)
      projection->run(projWeight->data, y.data, logits->data, stream);
    CHECK(cudaStreamSynchronize(stream));
  };
  std::vector<double> times = bench::timeBatches(options, batch);
  size_t freeAfter;
  CHECK(cudaMemGetInfo(&freeAfter, &total));

  const Buffer<float> &result = model.languageModel ? *logits : y;
  std::vector<float> host(result.count);
  CHECK(cudaMemcpy(host.data(), result.data, result.bytes(), cudaMemcpyDeviceToHost));
  bench::writeOutput(options, model, host.data());

  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, 0));
  int runtime, driver;
  CHECK(cudaRuntimeGetVersion(&runtime));
  CHECK(cudaDriverGetVersion(&driver));
  nlohmann::json versions = {{"cudnn", cudnnGetVersion()},
                             {"cublaslt", cublasLtGetVersion()},
                             {"cuda_runtime", runtime},
                             {"cuda_driver", driver},
                             {"cuda_device", properties.name}};
  bench::report(times, setupSeconds, versions,
                {"compile_s: descriptors, weight packing and uploads, cuBLASLt "
                 "heuristic",
                 "GPU memory: held after the timed batches (cudaMemGetInfo)"},
                {{"peak_device_mib", (freeBefore - freeAfter) / double(1 << 20)}});
  return 0;
}
