//===- Safetensors.h - Read and write safetensors files ---------*- C++ -*-===//
//
// The safetensors format (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON naming each tensor's
// dtype, shape and [begin, end) byte range in the data buffer that follows,
// and an optional "__metadata__" object of strings.
//
// Used behind a C ABI, so no exception leaves this interface: failures are
// reported through a bool or nullptr plus a one-line message naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_RUNTIME_SAFETENSORS_H
#define RECUR_RUNTIME_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace recur::safetensors {

/// Bytes per element of a safetensors dtype string ("F64", "F32", "F16",
/// "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"); 0 if unknown.
size_t dtypeSize(const std::string &dtype);

/// One tensor of a File.
struct Entry {
  std::string name;
  /// As written in the file, e.g. "F32".
  std::string dtype;
  std::vector<int64_t> shape;
  /// Points into the File's buffer. The format promises no alignment, so
  /// read elements with memcpy.
  const uint8_t *data = nullptr;
  /// Bytes.
  size_t size = 0;

  /// Product of the shape; 1 for a scalar.
  int64_t numElements() const;
};

/// A whole safetensors file held in memory, validated on load.
class File {
public:
  /// Reads and validates the whole file. On failure returns nullptr and sets
  /// `error` to one line that names the file path and says what is wrong.
  static std::unique_ptr<File> open(const std::string &path,
                                    std::string &error);
  /// Same, from bytes already in memory; `origin` is used in messages in
  /// place of the path.
  static std::unique_ptr<File> parse(std::vector<uint8_t> bytes,
                                     const std::string &origin,
                                     std::string &error);

  /// Sorted by data offset.
  const std::vector<Entry> &entries() const { return entries_; }
  /// nullptr if absent.
  const Entry *find(const std::string &name) const;
  /// The "__metadata__" object; may be empty.
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

  // Entries point into bytes_, so a File stays where it was made.
  File(const File &) = delete;
  File &operator=(const File &) = delete;

private:
  File() = default;

  std::vector<uint8_t> bytes_;
  std::vector<Entry> entries_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

/// Collects tensors and metadata, then serializes them.
class Writer {
public:
  /// Copies the bytes. Returns false and sets `error` on an unknown dtype, a
  /// negative dimension, size != product(shape) * dtypeSize, a duplicate,
  /// empty or non-UTF-8 name, or the name "__metadata__".
  bool add(const std::string &name, const std::string &dtype,
           const std::vector<int64_t> &shape, const void *data, size_t size,
           std::string &error);
  /// A later value for the same key replaces the earlier one.
  void setMetadata(const std::string &key, const std::string &value);

  /// Writes the file: header padded with spaces so that the data starts at a
  /// multiple of 8 bytes, data contiguous in insertion order. Returns false
  /// and sets `error` (naming the path) on failure.
  bool write(const std::string &path, std::string &error) const;
  /// The bytes write() would write; empty if they cannot be made (metadata
  /// that is not UTF-8, out of memory), for which write() gives the reason.
  std::vector<uint8_t> toBytes() const;

private:
  struct Pending {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };

  bool serialize(std::vector<uint8_t> &out, std::string &error) const;

  std::vector<Pending> tensors_;
  std::map<std::string, std::string> metadata_;
  /// setMetadata has no error channel; its failures are reported by write().
  std::string deferredError_;
  bool metadataLost_ = false;
};

} // namespace recur::safetensors

#endif // RECUR_RUNTIME_SAFETENSORS_H
