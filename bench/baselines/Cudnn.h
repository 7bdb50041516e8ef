//===- Cudnn.h - what the cuDNN baseline's files share ---------*- C++ -*-===//
//
// Status checks, device buffers, a cuBLASLt matmul, and the stacked LSTM as
// one cuDNN RNN with the weights packed into its weight space the way
// PyTorch's cuDNN path packs them: cuDNN's linear layers 0-3 are W_ih's gates
// (i, f, g, o), 4-7 W_hh's, each [H, in] row-major, biases alike.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_BENCH_CUDNN_H
#define RECUR_BENCH_CUDNN_H

#include "Baseline.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>
#include <vector>

namespace bench {

inline void check(cudaError_t status, const char *call) {
  if (status != cudaSuccess)
    die(std::string(call) + ": " + cudaGetErrorString(status));
}
inline void check(cudnnStatus_t status, const char *call) {
  if (status != CUDNN_STATUS_SUCCESS)
    die(std::string(call) + ": " + cudnnGetErrorString(status));
}
inline void check(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    die(std::string(call) + ": cuBLAS status " + std::to_string(status));
}
#define BENCH_CHECK(call) ::bench::check((call), #call)

/// A device buffer of `count` elements of T.
template <typename T> struct Buffer {
  T *data = nullptr;
  size_t count = 0;
  explicit Buffer(size_t count) : count(count) {
    BENCH_CHECK(cudaMalloc(reinterpret_cast<void **>(&data), bytes()));
  }
  Buffer(const Buffer &) = delete;
  ~Buffer() { cudaFree(data); }
  size_t bytes() const { return count * sizeof(T); }
  void upload(const std::vector<T> &host) {
    BENCH_CHECK(cudaMemcpy(data, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count);
    BENCH_CHECK(cudaMemcpy(host.data(), data, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void zero(cudaStream_t stream) {
    BENCH_CHECK(cudaMemsetAsync(data, 0, bytes(), stream));
  }
};

/// One f32 cuBLASLt product in column-major terms, D [m, n] = op(A) · op(B)
/// (+ bias [m] in the epilogue), with the algorithm chosen once.
/// `transA`: A is stored [k, m] (else [m, k]); `transB`: B is stored [n, k]
/// (else [k, n]); leading dimensions are the stored rows.
class Matmul {
public:
  struct Shape {
    int64_t m, n, k;
    bool transA = false, transB = false;
    const float *bias = nullptr;
  };
  Matmul(cublasLtHandle_t handle, const Shape &shape, bool tf32);
  Matmul(const Matmul &) = delete;
  ~Matmul();
  void run(const float *a, const float *b, float *d, cudaStream_t stream);

private:
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr,
                         dLayout = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  Buffer<char> workspace{32 << 20};
};

/// The model's stacked LSTM as one cuDNN RNN over [T, B] sequence-major
/// data with zero initial states, and its weight space.
struct CudnnLstm {
  int T, B, I, H, L;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnRNNDataDescriptor_t xDesc = nullptr, yDesc = nullptr;
  cudnnTensorDescriptor_t hDesc = nullptr;
  Buffer<int> lengths;
  size_t weightBytes = 0, workBytes = 0, reserveBytes = 0;

  /// `mode` sizes the work and reserve space (the reserve is for training).
  CudnnLstm(cudnnHandle_t cudnn, const Model &model, bool tf32,
            cudnnForwardMode_t mode);
  CudnnLstm(const CudnnLstm &) = delete;
  ~CudnnLstm();

  /// Copies the model's LSTM weights into `space` (weightBytes on the device).
  void upload(cudnnHandle_t cudnn, const Model &model, void *space) const;
  /// The weights in `space` under their PyTorch names (lstm.weight_ih_l0,
  /// ...) and layouts, appended to `tensors` (their data kept in `storage`).
  void download(cudnnHandle_t cudnn, const void *space,
                std::vector<std::vector<float>> &storage,
                std::vector<NamedTensor> &tensors) const;

private:
  /// Calls `visit(layer, id, matrix, bias)` with the device addresses of
  /// linear layer `id` (0-7) of `layer` in `space`, after checking its shape.
  template <typename Visit>
  void forEachGate(cudnnHandle_t cudnn, const void *space, Visit visit) const;
};

/// Runs the LM's SGD training step (--lr) with cuDNN's training calls
/// (cudnn_lm_train.cpp): writes the first step's loss and the weights after
/// it to --outputs, then times warmup + iters more steps and reports them.
void runCudnnTraining(const Options &options, const Model &model,
                      cudnnHandle_t cudnn, cudaStream_t stream, bool tf32,
                      const nlohmann::json &versions);

} // namespace bench

#endif // RECUR_BENCH_CUDNN_H
