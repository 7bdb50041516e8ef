//===- HostHeap.h - host buffers of compiled models -------------*- C++ -*-===//
//
// Every host buffer a CPU model's code allocates (through the heap hooks) and
// every host output is allocated and freed here. Large buffers are kept for
// reuse when freed: a model allocates the same large buffers in every run
// (the reference LM's 256 MB of logits at B=128), and a fresh one costs a
// page fault and the zeroing of every 4 KiB page in each run.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_HOSTHEAP_H
#define RECUR_RUNTIME_HOSTHEAP_H

#include <cstddef>

namespace recur::runtime {

/// `bytes` aligned to `alignment` (a power of two), or null.
void *hostAllocate(size_t bytes, size_t alignment) noexcept;

/// Frees what hostAllocate returned, or anything std::malloc returned. A
/// large buffer is kept for reuse unless `keep` is false (or the heap keeps
/// enough already).
void hostFree(void *pointer, bool keep = true) noexcept;
/// hostFree of a buffer handed out (an output's), as a plain function.
inline void hostFreeBuffer(void *pointer) { hostFree(pointer); }

/// Gives every kept buffer back to the system (tests; a process that is
/// done with its models).
void releaseHostCache() noexcept;

/// Bytes kept for reuse now.
size_t hostCacheBytes() noexcept;

} // namespace recur::runtime

#endif // RECUR_RUNTIME_HOSTHEAP_H
