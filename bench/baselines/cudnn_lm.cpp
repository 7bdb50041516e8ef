//===- cudnn_lm.cpp - the LSTM LM through cuDNN and cuBLASLt (baseline) ---===//
//
//   bench-cudnn-lm --weights w.safetensors --inputs in.safetensors
//                  --outputs out.safetensors [--warmup K] [--iters N]
//                  [--precision fp32|tf32] [--lr LR [--clip-norm C]]
//
// The embedding is gathered by a small kernel, the stacked LSTM is one
// cudnnRNNForward (inference mode), the projection one cuBLASLt matmul with
// the bias in its epilogue. Weights are packed from PyTorch's layout into
// cuDNN's weight space (Cudnn.h). Inputs and outputs stay on the device while
// timed. fp32 forbids TF32 (CUDNN_FMA_MATH, CUBLAS_COMPUTE_32F), as PyTorch
// does with allow_tf32 off. With --lr, an LM's SGD training step instead
// (cudnn_lm_train.cpp).
//
// cuDNN and cuBLAS are linked dynamically; on the GPU machine they come from
// PyTorch's wheels (bench/run puts site-packages/nvidia/*/lib on
// LD_LIBRARY_PATH). The CUDA runtime is linked statically.
//
//===----------------------------------------------------------------------===//

#include "Cudnn.h"
#include "cudnn_kernels.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

using bench::Buffer;

namespace {

/// What this cuDNN says of a bf16 LSTM of the model's sizes (bench/run lists
/// it as the row's reason): whether its RNN API takes bf16 data at all, which
/// decides whether a matched-precision cuDNN row can exist.
std::string bf16Support(const bench::Model &model) {
  cudnnHandle_t cudnn;
  BENCH_CHECK(cudnnCreate(&cudnn));
  cudnnRNNDescriptor_t rnn;
  BENCH_CHECK(cudnnCreateRNNDescriptor(&rnn));
  std::string version = "cuDNN " + std::to_string(cudnnGetVersion());
  int H = model.hidden;
  cudnnStatus_t status = cudnnSetRNNDescriptor_v8(
      rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_BFLOAT16,
      CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, model.inputSize, H, H,
      int(model.layers.size()), nullptr, CUDNN_RNN_PADDED_IO_ENABLED);
  size_t weightBytes = 0;
  if (status == CUDNN_STATUS_SUCCESS)
    status = cudnnGetRNNWeightSpaceSize(cudnn, rnn, &weightBytes);
  cudnnDestroyRNNDescriptor(rnn);
  cudnnDestroy(cudnn);
  if (status != CUDNN_STATUS_SUCCESS)
    return version + " refuses a bf16 LSTM (" + cudnnGetErrorString(status) +
           "): no matched-precision cuDNN row";
  return version + " accepts a bf16 LSTM descriptor (weight space " +
         std::to_string(weightBytes) +
         " bytes); this baseline's bf16 path is not written yet";
}

constexpr const char *kUsage =
    "usage: bench-cudnn-lm --weights w.safetensors --inputs in.safetensors\n"
    "                      --outputs out.safetensors [--warmup K] [--iters N]\n"
    "                      [--precision fp32|tf32] [--lr LR [--clip-norm C]]\n"
    "Runs the model of the weights (an LSTM LM or a bare stacked LSTM) with\n"
    "cuDNN and prints {\"times_ms\": [...], ...} as JSON. With --lr, each\n"
    "timed batch is an LM's SGD training step instead.\n";

} // namespace

int main(int argc, char **argv) {
  bench::Options options = bench::parseOptions(argc, argv, kUsage);
  bool bf16 = options.precision == "bf16";
  if (options.precision != "fp32" && options.precision != "tf32" && !bf16)
    bench::unavailable("the cuDNN baseline runs fp32 and tf32 only");
  int devices = 0;
  cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0)
    bench::unavailable(
        std::string("no CUDA device (") +
        (probe != cudaSuccess ? cudaGetErrorString(probe) : "none found") +
        ")");
  bench::Model model = bench::Model::load(options);
  if (model.gates != 4)
    bench::unavailable("the cuDNN baseline runs LSTM models only so far");
  if (bf16)
    bench::unavailable(bf16Support(model));
  bool tf32 = options.precision == "tf32";

  cudaDeviceProp properties;
  BENCH_CHECK(cudaGetDeviceProperties(&properties, 0));
  int runtime, driver;
  BENCH_CHECK(cudaRuntimeGetVersion(&runtime));
  BENCH_CHECK(cudaDriverGetVersion(&driver));
  nlohmann::json versions = {{"cudnn", cudnnGetVersion()},
                             {"cublaslt", cublasLtGetVersion()},
                             {"cuda_runtime", runtime},
                             {"cuda_driver", driver},
                             {"cuda_device", properties.name}};

  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t cudnn;
  BENCH_CHECK(cudnnCreate(&cudnn));
  BENCH_CHECK(cudnnSetStream(cudnn, stream));
  if (options.training) {
    bench::runCudnnTraining(options, model, cudnn, stream, tf32, versions);
    return 0;
  }

  auto setupStart = std::chrono::steady_clock::now();
  size_t freeBefore, total;
  BENCH_CHECK(cudaMemGetInfo(&freeBefore, &total));
  bench::CudnnLstm lstm(cudnn, model, tf32, CUDNN_FWD_MODE_INFERENCE);
  Buffer<char> weights(lstm.weightBytes), work(lstm.workBytes);
  lstm.upload(cudnn, model, weights.data);

  int64_t N = int64_t(model.seq) * model.batch, V = model.vocab;
  int64_t I = model.inputSize, H = model.hidden;
  Buffer<float> x(N * I), y(N * H);
  cublasLtHandle_t cublasLt = nullptr;
  std::unique_ptr<Buffer<float>> embedding, projWeight, projBias, logits;
  std::unique_ptr<Buffer<int64_t>> tokens;
  std::unique_ptr<bench::Matmul> projection;
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
    // logits [N, V] = y [N, H] · weightᵀ + bias; column-major, logitsᵀ
    // [V, N] = weight (stored [H, V]) ᵀ · yᵀ [H, N].
    BENCH_CHECK(cublasLtCreate(&cublasLt));
    projection = std::make_unique<bench::Matmul>(
        cublasLt,
        bench::Matmul::Shape{V, N, H, /*transA=*/true, /*transB=*/false,
                             projBias->data},
        tf32);
  } else {
    x.upload(model.input.data);
  }
  BENCH_CHECK(cudaDeviceSynchronize());
  double setupSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - setupStart)
                            .count();

  auto batch = [&] {
    if (model.languageModel)
      BENCH_CHECK(
          benchGatherRows(embedding->data, tokens->data, x.data, N, I, stream));
    BENCH_CHECK(cudnnRNNForward(
        cudnn, lstm.rnn, CUDNN_FWD_MODE_INFERENCE, lstm.lengths.data,
        lstm.xDesc, x.data, lstm.yDesc, y.data, lstm.hDesc, nullptr, nullptr,
        lstm.hDesc, nullptr, nullptr, lstm.weightBytes, weights.data,
        lstm.workBytes, work.data, 0, nullptr));
    if (projection)
      projection->run(projWeight->data, y.data, logits->data, stream);
    BENCH_CHECK(cudaStreamSynchronize(stream));
  };
  std::vector<double> times = bench::timeBatches(options, batch);
  size_t freeAfter;
  BENCH_CHECK(cudaMemGetInfo(&freeAfter, &total));

  const Buffer<float> &result = model.languageModel ? *logits : y;
  bench::writeOutput(options, model, result.download().data());
  bench::report(
      times, setupSeconds, versions,
      {"compile_s: descriptors, weight packing and uploads, cuBLASLt "
       "heuristic",
       "GPU memory: held after the timed batches (cudaMemGetInfo)"},
      {{"peak_device_mib", (freeBefore - freeAfter) / double(1 << 20)}});
  return 0;
}
