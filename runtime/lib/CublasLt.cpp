//===- CublasLt.cpp - cuBLASLt for models compiled with --gemm=cublaslt ---===//

#include "CublasLt.h"

#include "recur/runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace recur::cuda {
namespace {

// The few cuBLASLt types and constants used here, with the values of
// cublasLt.h, cublas_api.h and library_types.h (CUDA 11-13); the headers are
// not needed to build the runtime. Struct arguments are passed as void
// pointers: only the C ABI is shared with the library, and UBSan's function
// type check would tell our struct types from the library's.
using Status = int;
using Handle = void *;
using Descriptor = void *;
constexpr Status kSuccess = 0;
constexpr int kComputeF32 = 68, kComputeF32FastBf16 = 75,
              kComputeF32FastTf32 = 77; // cublasComputeType_t
constexpr int kDataF32 = 0;             // CUDA_R_32F
constexpr int kDescTransA = 3;          // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int kOpT = 1;                 // CUBLAS_OP_T
constexpr int kPrefMaxWorkspace = 1; // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES
constexpr int kPrefAlignmentA = 5, kPrefAlignmentB = 6, kPrefAlignmentC = 7,
              kPrefAlignmentD = 8;

struct Algorithm {
  uint64_t data[8];
};
struct HeuristicResult {
  Algorithm algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};

/// The largest power of two up to 256 that divides `address`: cuBLASLt's
/// heuristic assumes 256 unless told, and a caller's CUDA input is used in
/// place, with whatever alignment it has.
uint32_t alignmentOf(uint64_t address) {
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0)
    alignment /= 2;
  return alignment;
}

struct Library {
  std::string path;
#define RECUR_CUBLASLT_FUNCTIONS(X)                                            \
  X(cublasLtCreate, Handle *)                                                  \
  X(cublasLtDestroy, Handle)                                                   \
  X(cublasLtMatmulDescCreate, Descriptor *, int, int)                          \
  X(cublasLtMatmulDescDestroy, Descriptor)                                     \
  X(cublasLtMatmulDescSetAttribute, Descriptor, int, const void *, size_t)     \
  X(cublasLtMatrixLayoutCreate, Descriptor *, int, uint64_t, uint64_t,         \
    int64_t)                                                                   \
  X(cublasLtMatrixLayoutDestroy, Descriptor)                                   \
  X(cublasLtMatmulPreferenceCreate, Descriptor *)                              \
  X(cublasLtMatmulPreferenceDestroy, Descriptor)                               \
  X(cublasLtMatmulPreferenceSetAttribute, Descriptor, int, const void *,       \
    size_t)                                                                    \
  X(cublasLtMatmulAlgoGetHeuristic, Handle, Descriptor, Descriptor,            \
    Descriptor, Descriptor, Descriptor, Descriptor, int,                       \
    void * /*HeuristicResult[]*/, int *)                                       \
  X(cublasLtMatmul, Handle, Descriptor, const void *, const void *,            \
    Descriptor, const void *, Descriptor, const void *, const void *,          \
    Descriptor, void *, Descriptor, const void * /*Algorithm*/, void *,        \
    size_t, void *)
#define RECUR_DECLARE(name, ...) Status (*name)(__VA_ARGS__) = nullptr;
  RECUR_CUBLASLT_FUNCTIONS(RECUR_DECLARE)
#undef RECUR_DECLARE
  const char *(*cublasLtGetStatusString)(Status) = nullptr; // optional
  size_t (*cublasLtGetVersion)() = nullptr;                 // optional

  std::string describe(Status status) const {
    const char *text =
        cublasLtGetStatusString ? cublasLtGetStatusString(status) : nullptr;
    return text ? text : "cuBLAS status " + std::to_string(status);
  }
};

/// The loaded library, or why it is not there. Loading is retried until it
/// succeeds (RECUR_CUBLASLT_PATH may be set in between).
const Library &loadLibrary() {
  static std::mutex mutex;
  static Library *loaded = nullptr; // never unloaded: handles may outlive us
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  std::vector<std::string> candidates;
  if (const char *path = std::getenv("RECUR_CUBLASLT_PATH"); path && *path)
    candidates.push_back(path);
  else
    candidates = {"libcublasLt.so.13", "libcublasLt.so.12"};
  std::string reasons;
  for (const std::string &candidate : candidates) {
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      reasons += (reasons.empty() ? "" : "; ") +
                 std::string(reason ? reason : candidate + ": not found");
      continue;
    }
    auto library = std::make_unique<Library>();
    library->path = candidate;
#define RECUR_RESOLVE(name, ...)                                               \
  library->name =                                                              \
      reinterpret_cast<decltype(library->name)>(dlsym(handle, #name));         \
  if (!library->name)                                                          \
    throw std::runtime_error(candidate + " is not a usable cuBLASLt: it "      \
                                         "lacks " #name);
    RECUR_CUBLASLT_FUNCTIONS(RECUR_RESOLVE)
#undef RECUR_RESOLVE
    library->cublasLtGetStatusString =
        reinterpret_cast<decltype(library->cublasLtGetStatusString)>(
            dlsym(handle, "cublasLtGetStatusString"));
    library->cublasLtGetVersion =
        reinterpret_cast<decltype(library->cublasLtGetVersion)>(
            dlsym(handle, "cublasLtGetVersion"));
    loaded = library.release();
    return *loaded;
  }
  throw std::runtime_error(
      "the model runs its GEMMs with cuBLASLt (recur-compile "
      "--gemm=cublaslt), which cannot be loaded (" +
      reasons +
      "): install CUDA's cuBLAS or PyTorch's nvidia-cublas wheel, name the "
      "library in RECUR_CUBLASLT_PATH, or recompile with --gemm=generated");
}

} // namespace

struct CublasLt::Plan {
  const Library &library;
  Descriptor operation = nullptr, aLayout = nullptr, bLayout = nullptr,
             cLayout = nullptr;
  Algorithm algorithm{};

  explicit Plan(const Library &library) : library(library) {}
  ~Plan() {
    if (operation)
      library.cublasLtMatmulDescDestroy(operation);
    for (Descriptor layout : {aLayout, bLayout, cLayout})
      if (layout)
        library.cublasLtMatrixLayoutDestroy(layout);
  }
};

std::unique_ptr<CublasLt> CublasLt::create() {
  const Library &library = loadLibrary();
  std::unique_ptr<CublasLt> blas(new CublasLt);
  if (Status status = library.cublasLtCreate(&blas->handle);
      status != kSuccess) {
    blas->handle = nullptr;
    throw std::runtime_error("cublasLtCreate (" + library.path +
                             ") failed: " + library.describe(status));
  }
  return blas;
}

CublasLt::~CublasLt() {
  plans.clear();
  if (handle)
    loadLibrary().cublasLtDestroy(handle);
}

std::string CublasLt::version() const {
  const Library &library = loadLibrary();
  return "cuBLASLt " +
         (library.cublasLtGetVersion
              ? std::to_string(library.cublasLtGetVersion())
              : std::string("(version unknown)")) +
         " (" + library.path + ")";
}

std::string CublasLt::matmul(int64_t m, int64_t n, int64_t k, uint64_t a,
                             int64_t lda, uint64_t b, int64_t ldb, uint64_t c,
                             int64_t ldc, int32_t precision, void *workspace,
                             size_t workspaceBytes, void *stream) noexcept {
  if (m == 0 || n == 0 || k == 0) // c is unchanged; cuBLASLt refuses them
    return "";
  if (m < 0 || n < 0 || k < 0 || lda < k || ldb < k || ldc < n)
    return "a GEMM call with invalid sizes (m " + std::to_string(m) + ", n " +
           std::to_string(n) + ", k " + std::to_string(k) + ")";
  int computeType = precision == RECUR_GEMM_FP32   ? kComputeF32
                    : precision == RECUR_GEMM_TF32 ? kComputeF32FastTf32
                    : precision == RECUR_GEMM_BF16 ? kComputeF32FastBf16
                                                   : -1;
  if (computeType < 0)
    return "a GEMM call with unknown precision " + std::to_string(precision);
  try {
    const Library &library = loadLibrary();
    auto fail = [&](Status status, const char *call) {
      return std::string(call) + " failed for a " + std::to_string(m) + "x" +
             std::to_string(n) + "x" + std::to_string(k) +
             " GEMM: " + library.describe(status);
    };
    // cuBLASLt is column-major: row-major c (m x n) is column-major c^T
    // (n x m) = b (n x k, the transpose of column-major b^T) times a^T
    // (k x m, row-major a read as column-major).
    // The library's A is our b, its B our a; C and D are c.
    uint32_t alignments[] = {alignmentOf(b), alignmentOf(a), alignmentOf(c)};
    Shape shape(m, n, k, lda, ldb, ldc, precision, alignments[0], alignments[1],
                alignments[2]);
    auto found = plans.find(shape);
    if (found == plans.end()) {
      auto plan = std::make_unique<Plan>(library);
      Status status;
      int transpose = kOpT;
      if ((status = library.cublasLtMatmulDescCreate(
               &plan->operation, computeType, kDataF32)) != kSuccess)
        return fail(status, "cublasLtMatmulDescCreate");
      if ((status = library.cublasLtMatmulDescSetAttribute(
               plan->operation, kDescTransA, &transpose, sizeof transpose)) !=
              kSuccess ||
          (status = library.cublasLtMatrixLayoutCreate(
               &plan->aLayout, kDataF32, k, n, ldb)) != kSuccess ||
          (status = library.cublasLtMatrixLayoutCreate(
               &plan->bLayout, kDataF32, k, m, lda)) != kSuccess ||
          (status = library.cublasLtMatrixLayoutCreate(&plan->cLayout, kDataF32,
                                                       n, m, ldc)) != kSuccess)
        return fail(status, "describing the GEMM to cuBLASLt");
      Descriptor preference = nullptr;
      if ((status = library.cublasLtMatmulPreferenceCreate(&preference)) !=
          kSuccess)
        return fail(status, "cublasLtMatmulPreferenceCreate");
      uint64_t limit = workspaceBytes;
      HeuristicResult result{};
      int returned = 0;
      status = library.cublasLtMatmulPreferenceSetAttribute(
          preference, kPrefMaxWorkspace, &limit, sizeof limit);
      const std::pair<int, uint32_t *> alignmentPreferences[] = {
          {kPrefAlignmentA, &alignments[0]},
          {kPrefAlignmentB, &alignments[1]},
          {kPrefAlignmentC, &alignments[2]},
          {kPrefAlignmentD, &alignments[2]}};
      for (auto [attribute, value] : alignmentPreferences)
        if (status == kSuccess)
          status = library.cublasLtMatmulPreferenceSetAttribute(
              preference, attribute, value, sizeof *value);
      if (status == kSuccess)
        status = library.cublasLtMatmulAlgoGetHeuristic(
            handle, plan->operation, plan->aLayout, plan->bLayout,
            plan->cLayout, plan->cLayout, preference, 1, &result, &returned);
      library.cublasLtMatmulPreferenceDestroy(preference);
      if (status != kSuccess)
        return fail(status, "cublasLtMatmulAlgoGetHeuristic");
      if (returned == 0)
        return "cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
               std::to_string(n) + "x" + std::to_string(k) + " GEMM";
      plan->algorithm = result.algo;
      // Run-time shapes (T, B) vary; keep the cache small.
      if (plans.size() >= 64)
        plans.clear();
      found = plans.emplace(shape, std::move(plan)).first;
    }
    const Plan &plan = *found->second;
    const float one = 1.0f;
    auto *cPointer = reinterpret_cast<void *>(c);
    Status status = library.cublasLtMatmul(
        handle, plan.operation, &one, reinterpret_cast<const void *>(b),
        plan.aLayout, reinterpret_cast<const void *>(a), plan.bLayout, &one,
        cPointer, plan.cLayout, cPointer, plan.cLayout, &plan.algorithm,
        workspace, workspaceBytes, stream);
    return status == kSuccess ? "" : fail(status, "cublasLtMatmul");
  } catch (const std::exception &error) {
    return error.what();
  } catch (...) {
    return "cuBLASLt failed";
  }
}

} // namespace recur::cuda
