/*===- runtime.h - librecur-runtime: run compiled Recur models -----*- C -*-===//
 *
 * Loads a model compiled by `recur-compile`, describes its tensors, binds its
 * weights, runs it. Tensors are exchanged as DLPack. Every function that can
 * fail returns a RecurError* (NULL on success) whose message names the tensor,
 * what was expected and what was given; the host process is never aborted.
 *
 *   RecurModel *model;
 *   RecurError *error = recur_model_load("libmodel.so", &model);
 *   if (!error) error = recur_model_bind_weights_file(model, "w.safetensors");
 *   if (!error) error = recur_model_run(model, inputs, 1, outputs, 1);
 *   if (error) { puts(recur_error_message(error)); recur_error_free(error); }
 *
 * Links no MLIR or LLVM library. docs/runtime.md has the details.
 *===----------------------------------------------------------------------===*/

#ifndef RECUR_RUNTIME_H
#define RECUR_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model ABI this runtime reads. recur-compile writes it into models, with
 * the two symbols a model exports (docs/runtime.md). */
#define RECUR_MODEL_ABI_VERSION 3
#define RECUR_MODEL_DESCRIPTION_SYMBOL "recur_compiled_model_description"
#define RECUR_MODEL_RUN_SYMBOL "recur_compiled_model_run"
/* Models with a "prologue" in their description also export a function that
 * computes the tensors derived from the weights, called like the run
 * function; the runtime calls it once per weight binding. */
#define RECUR_MODEL_PREPARE_SYMBOL "recur_compiled_model_prepare"
/* CPU models also export int64_t failed_allocation(void): nonzero, the size
 * of a heap allocation that failed in the calling thread's last run (which
 * then returned early, results unset); reading it clears it. */
#define RECUR_MODEL_FAILED_ALLOCATION_SYMBOL "recur_compiled_model_failed_allocation"
/* CPU models also export void set_heap(void *(*malloc)(size_t),
 * void *(*aligned_alloc)(size_t, size_t), void (*free)(void *)): the
 * functions the generated code allocates and frees its buffers with (by
 * default the C library's). The runtime passes functions that track a run's
 * live buffers, so that those allocated before a failed allocation are freed
 * rather than lost. */
#define RECUR_MODEL_SET_HEAP_SYMBOL "recur_compiled_model_set_heap"
/* CUDA models also export: int bind_gpu(void *(*resolve)(const char *name)),
 * which takes the runtime's implementation of every `mgpu*` function the
 * generated host code calls and returns how many it could not resolve; and
 * gpu_init/gpu_fini, which load and unload the embedded kernels (instead of
 * global constructors, which would run before the runtime can bind them). */
#define RECUR_MODEL_BIND_GPU_SYMBOL "recur_compiled_model_bind_gpu"
#define RECUR_MODEL_GPU_INIT_SYMBOL "recur_compiled_model_gpu_init"
#define RECUR_MODEL_GPU_FINI_SYMBOL "recur_compiled_model_gpu_fini"
/* A CUDA kernel whose name starts with this is persistent: its blocks wait
 * for one another at grid barriers. The runtime launches it cooperatively,
 * with at most as many blocks as the device holds at once (such a kernel
 * computes the same result on any grid). */
#define RECUR_PERSISTENT_KERNEL_PREFIX "recur_persistent_"
/* A CUDA model compiled with `recur-compile --gemm=cublaslt` also calls, bound
 * like the mgpu* functions:
 *   void recur_gpu_matmul(int64_t m, int64_t n, int64_t k,
 *                         uint64_t a, int64_t lda, uint64_t b, int64_t ldb,
 *                         uint64_t c, int64_t ldc, int32_t precision);
 * c[i][j] += sum over l of a[i][l] * b[j][l], for i < m, j < n, l < k: f32
 * row-major matrices at device addresses a (m x k), b (n x k) and c (m x n),
 * rows lda, ldb and ldc elements apart, products at a RecurGemmPrecision.
 * The runtime runs it with cuBLASLt (loaded on first use) on the model's
 * stream. */
#define RECUR_GPU_MATMUL_SYMBOL "recur_gpu_matmul"
typedef enum {
  RECUR_GEMM_FP32 = 0, /* strict f32 products */
  RECUR_GEMM_TF32 = 1, /* operands rounded to tf32 (tensor cores) */
  RECUR_GEMM_BF16 = 2  /* operands rounded to bf16 (tensor cores) */
} RecurGemmPrecision;

typedef struct RecurModel RecurModel;
typedef struct RecurError RecurError;

const char *recur_error_message(const RecurError *error);
void recur_error_free(RecurError *error);

RecurError *recur_model_load(const char *path, RecurModel **model);
void recur_model_free(RecurModel *model);

/* The model's JSON description (inputs, weights, outputs, program). */
const char *recur_model_description(const RecurModel *model);

typedef enum RecurTensorKind {
  RECUR_INPUT = 0,
  RECUR_WEIGHT = 1,
  RECUR_OUTPUT = 2,
} RecurTensorKind;

typedef struct RecurTensorInfo {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  /* -1 for a dynamic size, whose symbol dims[i] gives: "T" or "B" ("" for
   * static sizes). */
  const int64_t *shape;
  const char *const *dims;
  /* Integer inputs used as indices must lie in [0, index_bound); 0 if none. */
  int64_t index_bound;
  /* An input of sequence lengths ([B], each in [1, T]): T if static, -1 if
   * the run's; 0 for every other tensor. */
  int64_t lengths_steps;
} RecurTensorInfo;

size_t recur_model_num_tensors(const RecurModel *model, RecurTensorKind kind);
/* Pointers in `info` live as long as the model. */
RecurError *recur_model_tensor_info(const RecurModel *model,
                                    RecurTensorKind kind, size_t index,
                                    RecurTensorInfo *info);

/* Where the model runs: "cpu", or e.g. "NVIDIA H100 80GB HBM3 (sm_90),
 * device 0" for a CUDA model (chosen by RECUR_CUDA_DEVICE, default 0). */
const char *recur_model_device(const RecurModel *model);

/* What the model was compiled for (recur-compile --target; a
 * --target=cuda-emulator model is a CPU model). */
typedef enum RecurTarget {
  RECUR_TARGET_CPU = 0,
  RECUR_TARGET_CUDA = 1,
} RecurTarget;
RecurTarget recur_model_target(const RecurModel *model);

/* How the model's last run executed, or "" before the first run and for CPU
 * models. For a CUDA model: its number of kernel launches, and each
 * persistent kernel's cooperative launch with the grid that fit on the
 * device, e.g. "14 kernel launches; recur_persistent_forward_0: 1
 * cooperative launch of 384 blocks x 256 threads (asked for 384; 8 per
 * multiprocessor x 132 fit)". Valid until the next run. */
const char *recur_model_run_report(const RecurModel *model);

/* NULL if this process can run CUDA models; otherwise an error saying why
 * (no driver, no device). CPU models never need it. */
RecurError *recur_cuda_check(void);

/* Copies `tensor` (row-major) into the model. CPU models take host memory;
 * CUDA models host or CUDA memory, and keep their weights on the device. */
RecurError *recur_model_bind_weight(RecurModel *model, const char *name,
                                    const DLTensor *tensor);
/* Binds every weight from a safetensors file by name (PyTorch state_dict
 * names), strictly: a weight missing from the file and a tensor in the file
 * that the model does not take are both errors that list them. All or
 * nothing: on error no weight changes. */
RecurError *recur_model_bind_weights_file(RecurModel *model, const char *path);

typedef enum RecurBindMode {
  /* As PyTorch's load_state_dict(strict=True). */
  RECUR_BIND_STRICT = 0,
  /* As strict=False: binds the model's weights the file holds and ignores
   * the rest of the file; weights left unbound make recur_model_run fail
   * until they are bound. Dtypes and shapes are still checked. */
  RECUR_BIND_NON_STRICT = 1,
  /* A flag, added to either mode: an F32 tensor in the file bound to a bf16
   * weight is rounded to bf16 (to nearest even, as PyTorch's .bfloat16()).
   * Without it a dtype that differs from the weight's is an error. */
  RECUR_BIND_CONVERT_TO_BF16 = 2,
} RecurBindMode;

/* `mode` is a RecurBindMode, or one with RECUR_BIND_CONVERT_TO_BF16 added (an
 * int, so that any value a caller passes can be checked). */
RecurError *recur_model_bind_weights_file_mode(RecurModel *model,
                                               const char *path, int mode);

/* Copies the model's current value of weight `name` into `host`, a host
 * tensor of the weight's dtype and shape (row-major). A training step
 * (recur-gen --train) updates its bound weights in place at every run; this
 * reads them back. */
RecurError *recur_model_read_weight(RecurModel *model, const char *name,
                                    DLTensor *host);

/* Writes every weight's current value to a safetensors file at `path`, under
 * its name (the PyTorch state_dict's), in the model's dtype: after training
 * steps, the trained weights, ready for load_state_dict. Every weight must be
 * bound. */
RecurError *recur_model_save_weights(RecurModel *model, const char *path);

/* Threads for the model's parallel loops (default: OpenMP's, i.e. all cores),
 * 1 to 1024. */
RecurError *recur_model_set_threads(RecurModel *model, int threads);

/* CUDA models return device tensors (kDLCUDA) unless `host` is nonzero, in
 * which case outputs are copied to host memory. CPU models always return host
 * tensors. */
RecurError *recur_model_set_host_outputs(RecurModel *model, int host);

/* Runs the model. `inputs` are in description order; for a CUDA model they
 * may be in host memory (uploaded on each run) or on the model's device. Each
 * outputs[i] receives a new tensor that the caller releases with its deleter.
 * A CUDA run has finished on the GPU when this returns. */
RecurError *recur_model_run(RecurModel *model, const DLTensor *const *inputs,
                            size_t num_inputs, DLManagedTensor **outputs,
                            size_t num_outputs);

#ifdef __cplusplus
}
#endif

#endif /* RECUR_RUNTIME_H */
