//===- SafetensorsFuzzer.cpp - Fuzz the safetensors reader ----------------===//
//
// Parses the input as a safetensors file. Whatever the reader accepts must be
// safe to use as its header promises (every entry's bytes readable, sizes
// consistent with dtype and shape), and must survive a round trip through the
// writer unchanged. Any mismatch aborts, so libFuzzer records it as a crash.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace recur::safetensors;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "safetensors fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

/// Reads every byte of every entry, so that ASan checks the ranges the reader
/// handed out, and checks what the header promised about them. The entries
/// point into the File's own copy of the input, whose data buffer (after the
/// 8-byte length and the header) is `dataSize` bytes; ASan catches reads past
/// its end, this catches entries that stray into the header.
void checkEntries(const File &file, uint64_t dataSize) {
  const uint8_t *lowest = nullptr, *highest = nullptr;
  unsigned checksum = 0;
  for (const Entry &entry : file.entries()) {
    size_t elementSize = dtypeSize(entry.dtype);
    if (elementSize == 0)
      fail("entry with an unknown dtype", entry.name + ": " + entry.dtype);
    for (int64_t dim : entry.shape)
      if (dim < 0)
        fail("entry with a negative dimension", entry.name);
    if (uint64_t(entry.numElements()) * elementSize != entry.size)
      fail("entry size does not match its shape and dtype", entry.name);
    if (file.find(entry.name) != &entry)
      fail("find() does not return the entry", entry.name);
    if (!entry.size)
      continue;
    for (size_t i = 0; i < entry.size; ++i)
      checksum += entry.data[i];
    if (!lowest || entry.data < lowest)
      lowest = entry.data;
    if (!highest || entry.data + entry.size > highest)
      highest = entry.data + entry.size;
  }
  if (lowest && uint64_t(highest - lowest) > dataSize)
    fail("entries span more than the data buffer", "");
  // Keeps the reads above from being optimized away.
  volatile unsigned sink = checksum;
  (void)sink;
}

/// Writes `file` again with Writer and parses the result, which must describe
/// the same tensors and metadata. The writer may refuse what the reader
/// accepts (e.g. an empty name), which is not an error here.
void checkRoundTrip(const File &file) {
  Writer writer;
  std::string error;
  for (const Entry &entry : file.entries())
    if (!writer.add(entry.name, entry.dtype, entry.shape, entry.data,
                    entry.size, error))
      return;
  for (const auto &[key, value] : file.metadata())
    writer.setMetadata(key, value);
  std::vector<uint8_t> bytes = writer.toBytes();
  if (bytes.empty())
    return;
  std::unique_ptr<File> again = File::parse(bytes, "round trip", error);
  if (!again)
    fail("the writer's output does not parse", error);
  if (again->metadata() != file.metadata())
    fail("metadata changed in a round trip", "");
  if (again->entries().size() != file.entries().size())
    fail("tensor count changed in a round trip", "");
  for (const Entry &entry : file.entries()) {
    const Entry *copy = again->find(entry.name);
    if (!copy || copy->dtype != entry.dtype || copy->shape != entry.shape ||
        copy->size != entry.size ||
        (entry.size && std::memcmp(copy->data, entry.data, entry.size) != 0))
      fail("tensor changed in a round trip", entry.name);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::unique_ptr<File> file =
      File::parse(std::vector<uint8_t>(data, data + size), "input", error);
  if (!file) {
    if (error.empty())
      fail("rejected without a message", "");
    if (error.find('\n') != std::string::npos)
      fail("multi-line error message", error);
    return 0;
  }
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | data[i];
  checkEntries(*file, size - 8 - headerSize);
  checkRoundTrip(*file);
  return 0;
}
