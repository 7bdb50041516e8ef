//===- cudnn_kernels.h - the kernels the cuDNN baseline needs --*- C++ -*-===//
//
// The glue around cuDNN and cuBLASLt that neither library has: the embedding
// gather and its gradient's scatter, and for a training step the softmax
// cross-entropy's gradient, the gradient norm and the clipped SGD update.
// Compiled by nvcc on their own, so the rest of the baseline is plain C++.
// Every array is on the device.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_BENCH_CUDNN_KERNELS_H
#define RECUR_BENCH_CUDNN_KERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

/// out[r, :] = table[ids[r], :] for r < rows.
cudaError_t benchGatherRows(const float *table, const int64_t *ids, float *out,
                            int64_t rows, int64_t width, cudaStream_t stream);

/// table[ids[r], :] += rows[r, :] for r < count (ids may repeat).
cudaError_t benchScatterAddRows(const float *rows, const int64_t *ids,
                                float *table, int64_t count, int64_t width,
                                cudaStream_t stream);

/// Mean cross-entropy's gradient, in place: each row r of logits [rows,
/// width] becomes (softmax(row) - one_hot(targets[r])) * scale, and
/// rowLoss[r] = -log softmax(row)[targets[r]].
cudaError_t benchSoftmaxCrossEntropyBackward(float *logits,
                                             const int64_t *targets,
                                             float *rowLoss, int64_t rows,
                                             int64_t width, float scale,
                                             cudaStream_t stream);

/// *sum += Σ data[i]² for i < count.
cudaError_t benchAddSumOfSquares(const float *data, int64_t count, double *sum,
                                 cudaStream_t stream);

/// data[i] -= lr · coefficient · gradient[i], where coefficient is
/// clip_grad_norm_'s min(1, maxNorm / (sqrt(*squaredNorm) + 1e-6)), or 1
/// when maxNorm <= 0.
cudaError_t benchClippedSgd(float *data, const float *gradient, int64_t count,
                            const double *squaredNorm, float lr, float maxNorm,
                            cudaStream_t stream);

#endif // RECUR_BENCH_CUDNN_KERNELS_H
