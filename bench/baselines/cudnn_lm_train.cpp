//===- cudnn_lm_train.cpp - an SGD step of the LSTM LM through cuDNN ------===//
//
//   bench-cudnn-lm --lr LR [--clip-norm C] --weights ... --inputs ...
//
// The training step `recur-gen lstm-lm --train` compiles (mean cross-entropy,
// backward through time, clip_grad_norm_, SGD) as PyTorch's cuDNN path runs
// it: one cudnnRNNForward in training mode (keeping its reserve space), then
// cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8 for the stacked
// LSTM; cuBLASLt for the projection, its input gradient, its weight gradient
// and its bias gradient (a product with ones); small kernels for the gather,
// the softmax cross-entropy gradient, the embedding gradient's scatter, the
// gradient norm and the update. The LSTM's weights stay in cuDNN's weight
// space, updated in place with one kernel, as PyTorch's flattened weights
// are; nothing leaves the device while timed, and the clipping coefficient
// is computed on it.
//
//===----------------------------------------------------------------------===//

#include "Cudnn.h"
#include "cudnn_kernels.h"

#include <chrono>
#include <cmath>

void bench::runCudnnTraining(const Options &options, const Model &model,
                             cudnnHandle_t cudnn, cudaStream_t stream,
                             bool tf32, const nlohmann::json &versions) {
  auto setupStart = std::chrono::steady_clock::now();
  size_t freeBefore, total;
  BENCH_CHECK(cudaMemGetInfo(&freeBefore, &total));
  int64_t N = model.seq * model.batch, E = model.inputSize, H = model.hidden,
          V = model.vocab;

  CudnnLstm lstm(cudnn, model, tf32, CUDNN_FWD_MODE_TRAINING);
  Buffer<char> weights(lstm.weightBytes), diffWeights(lstm.weightBytes);
  Buffer<char> work(lstm.workBytes), reserve(lstm.reserveBytes);
  // Alignment gaps in the weight space are updated with a zero gradient.
  BENCH_CHECK(cudaMemset(weights.data, 0, weights.bytes()));
  lstm.upload(cudnn, model, weights.data);
  int64_t weightFloats = lstm.weightBytes / sizeof(float);

  Buffer<float> embedding(V * E), projWeight(V * H), projBias(V);
  embedding.upload(model.embedding.data);
  projWeight.upload(model.projWeight.data);
  projBias.upload(model.projBias.data);
  Buffer<int64_t> tokens(N), targets(N);
  tokens.upload(model.tokens);
  targets.upload(model.targets);
  Buffer<float> x(N * E), y(N * H), logits(N * V), rowLoss(N);
  Buffer<float> diffX(N * E), diffY(N * H), diffEmbedding(V * E),
      diffProjWeight(V * H), diffProjBias(V), ones(N);
  ones.upload(std::vector<float>(N, 1.0f));
  Buffer<double> squaredNorm(1);

  // Row-major [r, c] is column-major [c, r]; in those terms, with G the
  // logits' gradient [V, N]:
  cublasLtHandle_t cublasLt;
  BENCH_CHECK(cublasLtCreate(&cublasLt));
  // logitsᵀ [V, N] = proj.weight (stored [H, V]) ᵀ · yᵀ [H, N] + bias.
  Matmul projection(cublasLt, {V, N, H, true, false, projBias.data}, tf32);
  // dyᵀ [H, N] = proj.weight [H, V] · G.
  Matmul projectionData(cublasLt, {H, N, V}, tf32);
  // d proj.weightᵀ [H, V] = yᵀ [H, N] · Gᵀ (G stored [V, N]).
  Matmul projectionWeights(cublasLt, {H, V, N, false, true}, tf32);
  // d proj.bias [V, 1] = G · ones [N, 1].
  Matmul projectionBias(cublasLt, {V, 1, N}, tf32);
  BENCH_CHECK(cudaDeviceSynchronize());
  double setupSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - setupStart)
                            .count();

  float lr = float(options.lr), maxNorm = float(options.clipNorm);
  struct Parameter {
    float *data;
    const float *gradient;
    int64_t count;
  };
  const Parameter parameters[] = {{reinterpret_cast<float *>(weights.data),
                                   reinterpret_cast<float *>(diffWeights.data),
                                   weightFloats},
                                  {embedding.data, diffEmbedding.data, V * E},
                                  {projWeight.data, diffProjWeight.data, V * H},
                                  {projBias.data, diffProjBias.data, V}};
  auto step = [&] {
    // Forward.
    BENCH_CHECK(
        benchGatherRows(embedding.data, tokens.data, x.data, N, E, stream));
    BENCH_CHECK(cudnnRNNForward(
        cudnn, lstm.rnn, CUDNN_FWD_MODE_TRAINING, lstm.lengths.data, lstm.xDesc,
        x.data, lstm.yDesc, y.data, lstm.hDesc, nullptr, nullptr, lstm.hDesc,
        nullptr, nullptr, lstm.weightBytes, weights.data, lstm.workBytes,
        work.data, lstm.reserveBytes, reserve.data));
    projection.run(projWeight.data, y.data, logits.data, stream);

    // Backward: the logits become their gradient.
    BENCH_CHECK(benchSoftmaxCrossEntropyBackward(logits.data, targets.data,
                                                 rowLoss.data, N, V,
                                                 1.0f / float(N), stream));
    projectionWeights.run(y.data, logits.data, diffProjWeight.data, stream);
    projectionBias.run(logits.data, ones.data, diffProjBias.data, stream);
    projectionData.run(projWeight.data, logits.data, diffY.data, stream);
    BENCH_CHECK(cudnnRNNBackwardData_v8(
        cudnn, lstm.rnn, lstm.lengths.data, lstm.yDesc, y.data, diffY.data,
        lstm.xDesc, diffX.data, lstm.hDesc, nullptr, nullptr, nullptr,
        lstm.hDesc, nullptr, nullptr, nullptr, lstm.weightBytes, weights.data,
        lstm.workBytes, work.data, lstm.reserveBytes, reserve.data));
    // cuDNN adds its weight gradients to what is there (as PyTorch calls it).
    diffWeights.zero(stream);
    BENCH_CHECK(cudnnRNNBackwardWeights_v8(
        cudnn, lstm.rnn, CUDNN_WGRAD_MODE_ADD, lstm.lengths.data, lstm.xDesc,
        x.data, lstm.hDesc, nullptr, lstm.yDesc, y.data, lstm.weightBytes,
        diffWeights.data, lstm.workBytes, work.data, lstm.reserveBytes,
        reserve.data));
    diffEmbedding.zero(stream);
    BENCH_CHECK(benchScatterAddRows(diffX.data, tokens.data, diffEmbedding.data,
                                    N, E, stream));

    // clip_grad_norm_ and SGD.
    squaredNorm.zero(stream);
    for (const Parameter &p : parameters)
      BENCH_CHECK(
          benchAddSumOfSquares(p.gradient, p.count, squaredNorm.data, stream));
    for (const Parameter &p : parameters)
      BENCH_CHECK(benchClippedSgd(p.data, p.gradient, p.count, squaredNorm.data,
                                  lr, maxNorm, stream));
    BENCH_CHECK(cudaStreamSynchronize(stream));
  };

  // The first step is the one checked: its loss and the weights after it.
  step();
  double lossSum = 0;
  for (float value : rowLoss.download())
    lossSum += value;
  float loss = float(lossSum / double(N));
  std::vector<float> hostEmbedding = embedding.download(),
                     hostProjWeight = projWeight.download(),
                     hostProjBias = projBias.download();
  std::vector<std::vector<float>> storage;
  std::vector<NamedTensor> outputs = {
      {"loss", {}, &loss}, {"embedding.weight", {V, E}, hostEmbedding.data()}};
  lstm.download(cudnn, weights.data, storage, outputs);
  outputs.push_back({"proj.weight", {V, H}, hostProjWeight.data()});
  outputs.push_back({"proj.bias", {V}, hostProjBias.data()});
  writeOutputs(options, outputs);

  std::vector<double> times = timeBatches(options, step);
  size_t freeAfter;
  BENCH_CHECK(cudaMemGetInfo(&freeAfter, &total));
  report(times, setupSeconds, versions,
         {"compile_s: descriptors, weight packing and uploads, cuBLASLt "
          "heuristics",
          "the first step (checked) runs before the warm-up steps",
          "GPU memory: held after the timed steps (cudaMemGetInfo)"},
         {{"peak_device_mib", (freeBefore - freeAfter) / double(1 << 20)}});
}
