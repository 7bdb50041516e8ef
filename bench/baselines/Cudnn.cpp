//===- Cudnn.cpp - what the cuDNN baseline's files share ------------------===//

#include "Cudnn.h"

namespace bench {

Matmul::Matmul(cublasLtHandle_t handle, const Shape &shape, bool tf32)
    : handle(handle) {
  BENCH_CHECK(cublasLtMatmulDescCreate(
      &op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
      CUDA_R_32F));
  cublasOperation_t transA = shape.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t transB = shape.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  BENCH_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
                                             &transA, sizeof(transA)));
  BENCH_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB,
                                             &transB, sizeof(transB)));
  if (shape.bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    BENCH_CHECK(cublasLtMatmulDescSetAttribute(
        op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    BENCH_CHECK(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                       &shape.bias, sizeof(shape.bias)));
  }
  auto layout = [](cublasLtMatrixLayout_t &out, int64_t rows, int64_t cols) {
    BENCH_CHECK(cublasLtMatrixLayoutCreate(&out, CUDA_R_32F, rows, cols, rows));
  };
  if (shape.transA)
    layout(aLayout, shape.k, shape.m);
  else
    layout(aLayout, shape.m, shape.k);
  if (shape.transB)
    layout(bLayout, shape.n, shape.k);
  else
    layout(bLayout, shape.k, shape.n);
  layout(dLayout, shape.m, shape.n);

  cublasLtMatmulPreference_t preference;
  BENCH_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  size_t limit = workspace.bytes();
  BENCH_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
      sizeof(limit)));
  int found = 0;
  BENCH_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, op, aLayout, bLayout,
                                             dLayout, dLayout, preference, 1,
                                             &algo, &found));
  cublasLtMatmulPreferenceDestroy(preference);
  if (found == 0)
    die("cuBLASLt found no algorithm for a [" + std::to_string(shape.m) + ", " +
        std::to_string(shape.n) + ", " + std::to_string(shape.k) + "] product");
}

Matmul::~Matmul() {
  cublasLtMatrixLayoutDestroy(dLayout);
  cublasLtMatrixLayoutDestroy(bLayout);
  cublasLtMatrixLayoutDestroy(aLayout);
  cublasLtMatmulDescDestroy(op);
}

void Matmul::run(const float *a, const float *b, float *d,
                 cudaStream_t stream) {
  float one = 1, zero = 0;
  BENCH_CHECK(cublasLtMatmul(handle, op, &one, a, aLayout, b, bLayout, &zero, d,
                             dLayout, d, dLayout, &algo.algo, workspace.data,
                             workspace.bytes(), stream));
}

CudnnLstm::CudnnLstm(cudnnHandle_t cudnn, const Model &model, bool tf32,
                     cudnnForwardMode_t mode)
    : T(model.seq), B(model.batch), I(model.inputSize), H(model.hidden),
      L(model.layers.size()), lengths(model.batch) {
  BENCH_CHECK(cudnnCreateRNNDescriptor(&rnn));
  // fp32 forbids TF32 (CUDNN_FMA_MATH), as PyTorch does with allow_tf32 off.
  // Padded I/O enabled is what the unpacked layouts ask for (PyTorch's
  // choice for unpacked input); every sequence has length T anyway.
  BENCH_CHECK(cudnnSetRNNDescriptor_v8(
      rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
      CUDNN_DATA_FLOAT, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH, I, H, H, L,
      nullptr, CUDNN_RNN_PADDED_IO_ENABLED));
  std::vector<int> hostLengths(B, T);
  lengths.upload(hostLengths);
  BENCH_CHECK(cudnnCreateRNNDataDescriptor(&xDesc));
  BENCH_CHECK(cudnnCreateRNNDataDescriptor(&yDesc));
  BENCH_CHECK(cudnnSetRNNDataDescriptor(
      xDesc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
      I, hostLengths.data(), nullptr));
  BENCH_CHECK(cudnnSetRNNDataDescriptor(
      yDesc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
      H, hostLengths.data(), nullptr));
  BENCH_CHECK(cudnnCreateTensorDescriptor(&hDesc));
  int hDims[3] = {L, B, H}, hStrides[3] = {B * H, H, 1};
  BENCH_CHECK(
      cudnnSetTensorNdDescriptor(hDesc, CUDNN_DATA_FLOAT, 3, hDims, hStrides));
  BENCH_CHECK(cudnnGetRNNWeightSpaceSize(cudnn, rnn, &weightBytes));
  BENCH_CHECK(cudnnGetRNNTempSpaceSizes(cudnn, rnn, mode, xDesc, &workBytes,
                                        &reserveBytes));
}

CudnnLstm::~CudnnLstm() {
  cudnnDestroyTensorDescriptor(hDesc);
  cudnnDestroyRNNDataDescriptor(yDesc);
  cudnnDestroyRNNDataDescriptor(xDesc);
  cudnnDestroyRNNDescriptor(rnn);
}

template <typename Visit>
void CudnnLstm::forEachGate(cudnnHandle_t cudnn, const void *space,
                            Visit visit) const {
  cudnnTensorDescriptor_t mDesc, bDesc;
  BENCH_CHECK(cudnnCreateTensorDescriptor(&mDesc));
  BENCH_CHECK(cudnnCreateTensorDescriptor(&bDesc));
  for (int l = 0; l < L; ++l) {
    for (int id = 0; id < 8; ++id) {
      int in = id >= 4 ? H : (l == 0 ? I : H);
      void *matrix, *bias;
      BENCH_CHECK(cudnnGetRNNWeightParams(cudnn, rnn, l, weightBytes,
                                          const_cast<void *>(space), id, mDesc,
                                          &matrix, bDesc, &bias));
      cudnnDataType_t type;
      int rank, dims[3], strides[3];
      BENCH_CHECK(
          cudnnGetTensorNdDescriptor(mDesc, 3, &type, &rank, dims, strides));
      if (int64_t(dims[0]) * dims[1] * dims[2] != int64_t(H) * in)
        die("cuDNN's matrix " + std::to_string(id) + " of layer " +
            std::to_string(l) + " is not [" + std::to_string(H) + ", " +
            std::to_string(in) + "]");
      visit(l, id, in, static_cast<float *>(matrix),
            static_cast<float *>(bias));
    }
  }
  cudnnDestroyTensorDescriptor(bDesc);
  cudnnDestroyTensorDescriptor(mDesc);
}

void CudnnLstm::upload(cudnnHandle_t cudnn, const Model &model,
                       void *space) const {
  forEachGate(
      cudnn, space, [&](int l, int id, int in, float *matrix, float *bias) {
        const LstmLayer &layer = model.layers[l];
        bool recurrent = id >= 4;
        int64_t gate = id % 4;
        const Tensor &w = recurrent ? layer.wHh : layer.wIh;
        const Tensor &b = recurrent ? layer.bHh : layer.bIh;
        BENCH_CHECK(cudaMemcpy(matrix, w.data.data() + gate * H * in,
                               sizeof(float) * H * in, cudaMemcpyHostToDevice));
        BENCH_CHECK(cudaMemcpy(bias, b.data.data() + gate * H,
                               sizeof(float) * H, cudaMemcpyHostToDevice));
      });
}

void CudnnLstm::download(cudnnHandle_t cudnn, const void *space,
                         std::vector<std::vector<float>> &storage,
                         std::vector<NamedTensor> &tensors) const {
  // Per layer: weight_ih, weight_hh, bias_ih, bias_hh, as PyTorch lists them.
  size_t first = storage.size();
  for (int l = 0; l < L; ++l) {
    int64_t in = l == 0 ? I : H;
    storage.emplace_back(4 * H * in);
    storage.emplace_back(4 * H * H);
    storage.emplace_back(4 * H);
    storage.emplace_back(4 * H);
  }
  forEachGate(
      cudnn, space, [&](int l, int id, int in, float *matrix, float *bias) {
        bool recurrent = id >= 4;
        int64_t gate = id % 4;
        std::vector<float> &w = storage[first + 4 * l + recurrent];
        std::vector<float> &b = storage[first + 4 * l + 2 + recurrent];
        BENCH_CHECK(cudaMemcpy(w.data() + gate * H * in, matrix,
                               sizeof(float) * H * in, cudaMemcpyDeviceToHost));
        BENCH_CHECK(cudaMemcpy(b.data() + gate * H, bias, sizeof(float) * H,
                               cudaMemcpyDeviceToHost));
      });
  for (int l = 0; l < L; ++l) {
    std::string suffix = "_l" + std::to_string(l);
    int64_t in = l == 0 ? I : H;
    std::vector<float> *data = &storage[first + 4 * l];
    tensors.push_back({"lstm.weight_ih" + suffix, {4 * H, in}, data[0].data()});
    tensors.push_back({"lstm.weight_hh" + suffix, {4 * H, H}, data[1].data()});
    tensors.push_back({"lstm.bias_ih" + suffix, {4 * H}, data[2].data()});
    tensors.push_back({"lstm.bias_hh" + suffix, {4 * H}, data[3].data()});
  }
}

} // namespace bench
