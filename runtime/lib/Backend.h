//===- Backend.h - where a model's memory and code live ---------*- C++ -*-===//
//
// The C API (Runtime.cpp) is written once against this interface, with no
// branch on the target; the CPU backend (CpuBackend.cpp) and the CUDA backend
// (CudaBackend.cpp, over Cuda.h) implement it. Every method throws Failure on
// error.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_BACKEND_H
#define RECUR_RUNTIME_BACKEND_H

#include "Description.h"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace recur::runtime {

/// Memory a backend owns for the model (a weight).
class Buffer {
public:
  virtual ~Buffer() = default;
  virtual void *data() const = 0;
};

/// A result buffer handed to the caller: `allocated` is what `free` frees
/// (outputs may outlive their model, so it needs no backend), `data` where
/// the elements start, on `device`. `tookOver`: it is the model's buffer
/// itself; otherwise a copy, and the model's buffer, if the output owned it,
/// is freed once every output is made (another output may be copying from
/// it).
struct OutputBuffer {
  void *allocated;
  void *data;
  DLDevice device;
  void (*free)(void *allocated);
  bool tookOver;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// "cpu", or the GPU's name.
  virtual const std::string &deviceName() const = 0;
  /// Where the model's weights and buffers live.
  virtual DLDevice device() const = 0;

  /// Throws unless the caller's `tensor` (named `what`) is in memory this
  /// backend takes.
  virtual void checkDevice(const std::string &what,
                           const DLTensor &tensor) const = 0;

  /// A copy of `bytes` at `data` (`tensor`'s memory) where the model reads
  /// its weights.
  virtual std::unique_ptr<Buffer> copyWeight(const DLTensor &tensor,
                                             const void *data, size_t bytes,
                                             const std::string &what) const = 0;
  /// The same from host memory (a weights file).
  virtual std::unique_ptr<Buffer>
  copyHostWeight(const void *data, size_t bytes,
                 const std::string &what) const = 0;

  /// Copies `bytes` of `tensor`'s data to `host` (for range checks); `data`
  /// is where the tensor's elements start.
  virtual void readToHost(const DLTensor &tensor, const void *data,
                          size_t bytes, void *host) const = 0;

  /// Where the model reads input `index` (`tensor`, `bytes` at `data`) in
  /// this run: the data itself, or a copy on the device.
  virtual const void *stageInput(size_t index, const DLTensor &tensor,
                                 const void *data, size_t bytes,
                                 const std::string &what) = 0;

  /// Held for the whole of a run: what one run uses (a stream, staged
  /// inputs) serves one run at a time.
  virtual std::unique_lock<std::mutex> lockRun() = 0;

  /// Runs the model's entry point and waits for it; throws the run's error.
  virtual void run(void (*entry)(void **), void **arguments) = 0;
  /// How the last run executed (recur_model_run_report); "" if there is
  /// nothing to say.
  virtual const std::string &runReport() const {
    static const std::string nothing;
    return nothing;
  }
  /// Whether a run that threw still wrote its results (to be freed): the
  /// CUDA host code runs to its end after a driver error; a CPU run that ran
  /// out of memory returns early with its results unset.
  virtual bool failedRunsSetResults() const = 0;

  /// The result buffer `allocated` (elements at `data`, `bytes`) as an
  /// output: taken over if `owned` (and the backend returns it as it is),
  /// else copied (it is an input, a weight or another output's).
  virtual OutputBuffer takeOutput(void *allocated, void *data, size_t bytes,
                                  bool owned,
                                  const std::string &what) const = 0;
  /// Frees a result buffer no output took.
  virtual void freeResult(void *allocated) const = 0;

  /// Outputs as host copies (true) or where the model computed them (false,
  /// the default). A CPU model's are on the host either way.
  virtual void setHostOutputs(bool host) = 0;
};

/// The backend of the model `description` describes, loaded from `library`
/// (at `path`, for messages): a CPU model's, or a CUDA model's (which
/// checks driver, device and architecture, and loads the kernels).
std::unique_ptr<Backend> createBackend(void *library, const std::string &path,
                                       const ModelDescription &description);

std::unique_ptr<Backend> createCpuBackend(void *library, size_t numInputs);
std::unique_ptr<Backend> createCudaBackend(void *library,
                                           const std::string &path,
                                           const std::string &cudaArch,
                                           size_t numInputs);

} // namespace recur::runtime

#endif // RECUR_RUNTIME_BACKEND_H
