//===- cudnn_kernels.h - the two kernels the cuDNN baseline needs -*- C++ -*-===//
//
// Compiled by nvcc on their own, so the rest of the baseline is plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_BENCH_CUDNN_KERNELS_H
#define RECUR_BENCH_CUDNN_KERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

/// out[r, :] = table[ids[r], :] for r < rows; every array on the device.
cudaError_t benchGatherRows(const float *table, const int64_t *ids, float *out,
                            int64_t rows, int64_t width, cudaStream_t stream);

#endif // RECUR_BENCH_CUDNN_KERNELS_H
