//===- CublasLt.h - cuBLASLt for --gemm=cublaslt models ---------*- C++ -*-===//
//
// Like the driver, cuBLASLt is loaded with dlopen, and only when a model
// calls it (RECUR_GPU_MATMUL_SYMBOL), so that librecur-runtime builds and
// runs every other model without it.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_CUBLASLT_H
#define RECUR_RUNTIME_CUBLASLT_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace recur::cuda {

/// One model's cuBLASLt handle and the matmul plans it has used.
class CublasLt {
public:
  /// Loads the library (RECUR_CUBLASLT_PATH if set, else libcublasLt.so.13
  /// or .12 from the library search path) and creates a handle; throws
  /// std::runtime_error saying what is missing and how to do without it.
  static std::unique_ptr<CublasLt> create();
  ~CublasLt();

  /// The library's version, e.g. "cuBLASLt 130100".
  std::string version() const;

  /// runtime.h's recur_gpu_matmul on `stream`: c[i][j] += sum_l a[i][l] *
  /// b[j][l], row-major f32 at device addresses, with up to
  /// `workspaceBytes` of scratch at `workspace`. Returns "" on success,
  /// else what failed. Never throws.
  std::string matmul(int64_t m, int64_t n, int64_t k, uint64_t a, int64_t lda,
                     uint64_t b, int64_t ldb, uint64_t c, int64_t ldc,
                     int32_t precision, void *workspace, size_t workspaceBytes,
                     void *stream) noexcept;

  /// Scratch memory each model gives cuBLASLt (NVIDIA's suggestion for
  /// Hopper).
  static constexpr size_t kWorkspaceBytes = 32u << 20;

  struct Plan;

private:
  CublasLt() = default;
  void *handle = nullptr;
  /// Descriptors and algorithm per shape, precision and the operands'
  /// alignments: the heuristic query runs once per such shape.
  using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int32_t, uint32_t, uint32_t, uint32_t>;
  std::map<Shape, std::unique_ptr<Plan>> plans;
};

} // namespace recur::cuda

#endif // RECUR_RUNTIME_CUBLASLT_H
