//===- cudnn_kernels.cu - the glue kernels of the cuDNN baseline ----------===//

#include "cudnn_kernels.h"

#include <cfloat>

namespace {

constexpr int kThreads = 256;

int64_t blocksFor(int64_t elements) {
  return (elements + kThreads - 1) / kThreads;
}

/// Grid-stride loops over more elements than this many blocks cover.
constexpr int64_t kMaxBlocks = 4096;

__global__ void gatherRows(const float *table, const int64_t *ids, float *out,
                           int64_t rows, int64_t width) {
  int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (index < rows * width)
    out[index] = table[ids[index / width] * width + index % width];
}

__global__ void scatterAddRows(const float *rows, const int64_t *ids,
                               float *table, int64_t count, int64_t width) {
  int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (index < count * width)
    atomicAdd(&table[ids[index / width] * width + index % width], rows[index]);
}

/// The block's total of `value` (kThreads threads), in every thread.
template <typename T, typename Combine>
__device__ T blockReduce(T value, Combine combine) {
  __shared__ T partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // `partial` may still be read by the previous reduction
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  value = partial[0];
  for (int w = 1; w < kThreads / 32; ++w)
    value = combine(value, partial[w]);
  return value;
}

/// One block per row.
__global__ void softmaxCrossEntropyBackward(float *logits,
                                            const int64_t *targets,
                                            float *rowLoss, int64_t width,
                                            float scale) {
  float *row = logits + blockIdx.x * width;
  int64_t target = targets[blockIdx.x];
  float targetLogit = row[target];
  float largest = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    largest = fmaxf(largest, row[c]);
  largest = blockReduce(largest, [](float a, float b) { return fmaxf(a, b); });
  float sum = 0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    sum += expf(row[c] - largest);
  sum = blockReduce(sum, [](float a, float b) { return a + b; });
  float inverse = 1.0f / sum;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    row[c] = (expf(row[c] - largest) * inverse - (c == target ? 1.0f : 0.0f)) *
             scale;
  if (threadIdx.x == 0)
    rowLoss[blockIdx.x] = logf(sum) + largest - targetLogit;
}

__global__ void addSumOfSquares(const float *data, int64_t count, double *sum) {
  double local = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    local += double(data[i]) * data[i];
  local = blockReduce(local, [](double a, double b) { return a + b; });
  if (threadIdx.x == 0)
    atomicAdd(sum, local);
}

__global__ void clippedSgd(float *data, const float *gradient, int64_t count,
                           const double *squaredNorm, float lr, float maxNorm) {
  double coefficient = 1;
  if (maxNorm > 0)
    coefficient = fmin(1.0, maxNorm / (sqrt(*squaredNorm) + 1e-6));
  float step = float(lr * coefficient);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    data[i] -= step * gradient[i];
}

} // namespace

cudaError_t benchGatherRows(const float *table, const int64_t *ids, float *out,
                            int64_t rows, int64_t width, cudaStream_t stream) {
  gatherRows<<<blocksFor(rows * width), kThreads, 0, stream>>>(table, ids, out,
                                                               rows, width);
  return cudaGetLastError();
}

cudaError_t benchScatterAddRows(const float *rows, const int64_t *ids,
                                float *table, int64_t count, int64_t width,
                                cudaStream_t stream) {
  scatterAddRows<<<blocksFor(count * width), kThreads, 0, stream>>>(
      rows, ids, table, count, width);
  return cudaGetLastError();
}

cudaError_t benchSoftmaxCrossEntropyBackward(float *logits,
                                             const int64_t *targets,
                                             float *rowLoss, int64_t rows,
                                             int64_t width, float scale,
                                             cudaStream_t stream) {
  softmaxCrossEntropyBackward<<<rows, kThreads, 0, stream>>>(
      logits, targets, rowLoss, width, scale);
  return cudaGetLastError();
}

cudaError_t benchAddSumOfSquares(const float *data, int64_t count, double *sum,
                                 cudaStream_t stream) {
  int64_t blocks =
      blocksFor(count) < kMaxBlocks ? blocksFor(count) : kMaxBlocks;
  addSumOfSquares<<<blocks, kThreads, 0, stream>>>(data, count, sum);
  return cudaGetLastError();
}

cudaError_t benchClippedSgd(float *data, const float *gradient, int64_t count,
                            const double *squaredNorm, float lr, float maxNorm,
                            cudaStream_t stream) {
  int64_t blocks =
      blocksFor(count) < kMaxBlocks ? blocksFor(count) : kMaxBlocks;
  clippedSgd<<<blocks, kThreads, 0, stream>>>(data, gradient, count,
                                              squaredNorm, lr, maxNorm);
  return cudaGetLastError();
}
