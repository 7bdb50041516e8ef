//===- FakeCublasLt.cpp - a libcublasLt.so.13 for testing the runtime -----===//
//
// The cuBLASLt functions librecur-runtime loads for models compiled with
// --gemm=cublaslt, computing on the fake driver's "device memory" (host
// memory) with cuBLASLt's documented semantics: column-major matrices
// described by (rows, columns, leading dimension) layouts, D = alpha op(A)
// op(B) + beta C with op set by the descriptor's TRANSA/TRANSB. Layouts that
// do not fit the operation are refused as cuBLASLt refuses them
// (CUBLAS_STATUS_INVALID_VALUE), so a runtime that describes a GEMM wrongly
// fails or computes a different product. As the real library's, the
// algorithm the heuristic returns needs the operands aligned as the
// preference said (256 bytes unless told), and fails otherwise.
// fake_cublaslt_* functions let the test inspect it.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <set>

namespace {
using Status = int;
constexpr Status kSuccess = 0, kInvalidValue = 7, kNotSupported = 15;
constexpr int kDataF32 = 0, kDescTransA = 3, kDescTransB = 4, kOpN = 0,
              kOpT = 1, kPrefAlignmentA = 5, kPrefAlignmentD = 8;

struct Layout {
  uint64_t rows, columns;
  int64_t leading;
};
struct Operation {
  int computeType;
  int transA = kOpN, transB = kOpN;
};
struct Preference {
  uint32_t alignments[4] = {256, 256, 256, 256}; // A, B, C, D
};
struct Algorithm {
  uint64_t data[8]; // the fake's: the alignments A, B, C and D need
};
struct HeuristicResult {
  Algorithm algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};

std::set<void *> liveObjects; // handles, descriptors, layouts, preferences
int matmuls = 0, lastComputeType = -1;
void *lastStream = nullptr;
int handleMarker;

template <typename T> T *track(T *object) {
  liveObjects.insert(object);
  return object;
}
template <typename T> Status release(void *object) {
  if (!liveObjects.erase(object))
    return kInvalidValue;
  delete static_cast<T *>(object);
  return kSuccess;
}

/// Element (row, column) of op(matrix).
float element(const float *data, const Layout &layout, int op, uint64_t row,
              uint64_t column) {
  if (op == kOpT)
    return data[column + row * layout.leading];
  return data[row + column * layout.leading];
}
} // namespace

extern "C" {

int fake_cublaslt_matmuls() { return matmuls; }
int fake_cublaslt_last_compute_type() { return lastComputeType; }
void *fake_cublaslt_last_stream() { return lastStream; }
int fake_cublaslt_live_objects() { return liveObjects.size(); }

const char *cublasLtGetStatusString(Status status) {
  return status == kInvalidValue ? "CUBLAS_STATUS_INVALID_VALUE"
                                 : "CUBLAS_STATUS_(fake)";
}
size_t cublasLtGetVersion() { return 130000; }

Status cublasLtCreate(void **handle) {
  *handle = track(new int(handleMarker));
  return kSuccess;
}
Status cublasLtDestroy(void *handle) { return release<int>(handle); }

Status cublasLtMatmulDescCreate(void **desc, int computeType, int scaleType) {
  if (scaleType != kDataF32)
    return kNotSupported;
  *desc = track(new Operation{computeType});
  return kSuccess;
}
Status cublasLtMatmulDescDestroy(void *desc) {
  return release<Operation>(desc);
}
Status cublasLtMatmulDescSetAttribute(void *desc, int attribute,
                                      const void *value, size_t size) {
  if (!liveObjects.count(desc) || size != sizeof(int))
    return kInvalidValue;
  auto *operation = static_cast<Operation *>(desc);
  int op = *static_cast<const int *>(value);
  if (attribute == kDescTransA)
    operation->transA = op;
  else if (attribute == kDescTransB)
    operation->transB = op;
  else
    return kNotSupported;
  return kSuccess;
}

Status cublasLtMatrixLayoutCreate(void **layout, int type, uint64_t rows,
                                  uint64_t columns, int64_t leading) {
  if (type != kDataF32 || leading < static_cast<int64_t>(rows))
    return kInvalidValue;
  *layout = track(new Layout{rows, columns, leading});
  return kSuccess;
}
Status cublasLtMatrixLayoutDestroy(void *layout) {
  return release<Layout>(layout);
}

Status cublasLtMatmulPreferenceCreate(void **preference) {
  *preference = track(new Preference);
  return kSuccess;
}
Status cublasLtMatmulPreferenceDestroy(void *preference) {
  return release<Preference>(preference);
}
Status cublasLtMatmulPreferenceSetAttribute(void *preference, int attribute,
                                            const void *value, size_t size) {
  if (!liveObjects.count(preference))
    return kInvalidValue;
  if (attribute >= kPrefAlignmentA && attribute <= kPrefAlignmentD) {
    if (size != sizeof(uint32_t))
      return kInvalidValue;
    static_cast<Preference *>(preference)
        ->alignments[attribute - kPrefAlignmentA] =
        *static_cast<const uint32_t *>(value);
  }
  return kSuccess;
}

Status cublasLtMatmulAlgoGetHeuristic(void *handle, void *desc, void *a,
                                      void *b, void *c, void *d,
                                      void *preference, int requested,
                                      void *resultsArray, int *returned) {
  // Struct pointers arrive as void *, as the runtime declares them: UBSan's
  // function type check compares struct types by name.
  auto *results = static_cast<HeuristicResult *>(resultsArray);
  for (void *object : {handle, desc, a, b, c, d, preference})
    if (!liveObjects.count(object))
      return kInvalidValue;
  *returned = requested > 0 ? 1 : 0;
  if (*returned) {
    results[0] = HeuristicResult{};
    for (int i = 0; i < 4; ++i)
      results[0].algo.data[i] =
          static_cast<Preference *>(preference)->alignments[i];
  }
  return kSuccess;
}

Status cublasLtMatmul(void *handle, void *desc, const void *alpha,
                      const void *a, void *aDesc, const void *b, void *bDesc,
                      const void *beta, const void *c, void *cDesc, void *d,
                      void *dDesc, const void *algorithmData, void *, size_t,
                      void *stream) {
  const auto *algorithm = static_cast<const Algorithm *>(algorithmData);
  for (void *object : {handle, desc, aDesc, bDesc, cDesc, dDesc})
    if (!liveObjects.count(object))
      return kInvalidValue;
  const void *operands[] = {a, b, c, d};
  for (int i = 0; i < 4; ++i)
    if (reinterpret_cast<uintptr_t>(operands[i]) % algorithm->data[i] != 0)
      return kInvalidValue; // the algorithm needs more alignment
  const auto &operation = *static_cast<Operation *>(desc);
  const auto &aLayout = *static_cast<Layout *>(aDesc);
  const auto &bLayout = *static_cast<Layout *>(bDesc);
  const auto &cLayout = *static_cast<Layout *>(cDesc);
  const auto &dLayout = *static_cast<Layout *>(dDesc);
  // op(A) is m x k, op(B) k x n, C and D m x n.
  bool aT = operation.transA == kOpT, bT = operation.transB == kOpT;
  uint64_t m = aT ? aLayout.columns : aLayout.rows;
  uint64_t k = aT ? aLayout.rows : aLayout.columns;
  uint64_t bk = bT ? bLayout.columns : bLayout.rows;
  uint64_t n = bT ? bLayout.rows : bLayout.columns;
  if (k != bk || cLayout.rows != m || cLayout.columns != n ||
      dLayout.rows != m || dLayout.columns != n)
    return kInvalidValue;
  float scale = *static_cast<const float *>(alpha);
  float keep = *static_cast<const float *>(beta);
  for (uint64_t column = 0; column < n; ++column)
    for (uint64_t row = 0; row < m; ++row) {
      double sum = 0;
      for (uint64_t l = 0; l < k; ++l)
        sum += double(element(static_cast<const float *>(a), aLayout,
                              operation.transA, row, l)) *
               element(static_cast<const float *>(b), bLayout, operation.transB,
                       l, column);
      float previous =
          static_cast<const float *>(c)[row + column * cLayout.leading];
      static_cast<float *>(d)[row + column * dLayout.leading] =
          float(scale * sum + keep * previous);
    }
  ++matmuls;
  lastComputeType = operation.computeType;
  lastStream = stream;
  return kSuccess;
}

} // extern "C"
