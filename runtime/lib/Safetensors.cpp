//===- Safetensors.cpp - Read and write safetensors files -----------------===//
//
// Every public function catches what nlohmann-json or the allocator may throw
// and turns it into an error message, since callers sit behind a C ABI.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include "Shapes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace recur::safetensors;
using nlohmann::json;
using recur::formatShape;

namespace {

/// The reference implementation's limit; anything larger is a corrupt length
/// rather than a real header, and must not drive an allocation.
constexpr uint64_t kMaxHeaderSize = 100'000'000;
constexpr uint64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

/// Length of the well-formed UTF-8 sequence at `text[i]`, or 0.
size_t utf8SequenceLength(const std::string &text, size_t i) {
  auto byte = [&](size_t k) { return uint8_t(text[k]); };
  uint8_t lead = byte(i);
  size_t length = lead < 0x80                    ? 1
                  : lead >= 0xc2 && lead <= 0xdf ? 2
                  : lead >= 0xe0 && lead <= 0xef ? 3
                  : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                 : 0;
  if (length == 0 || i + length > text.size())
    return 0;
  // The second byte's range excludes overlong forms, surrogates and code
  // points past U+10FFFF.
  uint8_t low = lead == 0xe0 ? 0xa0 : lead == 0xf0 ? 0x90 : 0x80;
  uint8_t high = lead == 0xed ? 0x9f : lead == 0xf4 ? 0x8f : 0xbf;
  if (length > 1 && (byte(i + 1) < low || byte(i + 1) > high))
    return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf)
      return 0;
  return length;
}

/// Messages end up on one line of a log, an exception text or a Python
/// string, but tensor names, paths and nlohmann's "last read" excerpts may
/// hold control bytes or broken UTF-8; those are escaped.
std::string oneLine(const std::string &text) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    size_t length = utf8SequenceLength(text, i);
    if (c == '\n') {
      result += "\\n";
    } else if (c == '\r') {
      result += "\\r";
    } else if (c == '\t') {
      result += "\\t";
    } else if (c < 0x20 || c == 0x7f || length == 0) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", c);
      result += buffer;
    } else {
      result.append(text, i, length);
      i += length;
      continue;
    }
    ++i;
  }
  return result;
}

std::string inQuotes(const std::string &text) { return "'" + text + "'"; }

/// A short rendering of a JSON value for "got ..." in messages.
std::string describe(const json &value) {
  if (value.is_object() || value.is_array())
    return std::string("an ") + value.type_name();
  if (value.is_string())
    return "a string";
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

/// Drops nlohmann's "[json.exception.parse_error.101] " tag, which says
/// nothing to a user.
std::string jsonReason(const std::exception &exception) {
  std::string text = exception.what();
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find("] ");
    if (close != std::string::npos)
      text = text.substr(close + 2);
  }
  return text;
}

bool isValidUtf8(const std::string &text) {
  for (size_t i = 0, length; i < text.size(); i += length)
    if ((length = utf8SequenceLength(text, i)) == 0)
      return false;
  return true;
}

/// Element count of `shape`, or false when it does not fit in int64_t. A zero
/// dimension makes the count 0 however large the others are.
bool checkedNumElements(const std::vector<int64_t> &shape, uint64_t &count) {
  count = 1;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    count = 0;
    return true;
  }
  for (int64_t dim : shape) {
    if (dim < 0 || uint64_t(dim) > kMaxInt64 / count)
      return false;
    count *= uint64_t(dim);
  }
  return true;
}

/// Byte count of `count` elements of `elementSize`, or false on overflow.
bool checkedBytes(uint64_t count, size_t elementSize, uint64_t &bytes) {
  if (elementSize != 0 &&
      count > std::numeric_limits<uint64_t>::max() / uint64_t(elementSize))
    return false;
  bytes = count * elementSize;
  return true;
}

/// Reads a JSON integer that must be >= 0 into `value`; otherwise says why,
/// naming the value as `what`.
bool readNonNegative(const json &node, const std::string &what, uint64_t &value,
                     std::string &why) {
  if (node.is_number_unsigned()) {
    value = node.get<uint64_t>();
    return true;
  }
  if (node.is_number_integer()) {
    why =
        what + " is " + std::to_string(node.get<int64_t>()) + ", must be >= 0";
    return false;
  }
  why = what + " must be an integer, got " + describe(node);
  return false;
}

/// A tensor's header entry after validation, before it is tied to a buffer.
struct Parsed {
  Entry entry;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// Checks one header entry; on failure returns the message (without the file
/// prefix).
std::string parseEntry(const std::string &name, const json &node,
                       uint64_t dataSize, Parsed &parsed) {
  std::string tensor = "tensor " + inQuotes(name);
  std::string where = tensor + ": ";
  if (!node.is_object())
    return where + "expected an object, got " + describe(node);
  for (const char *key : {"dtype", "shape", "data_offsets"})
    if (!node.contains(key))
      return where + "missing " + inQuotes(key);

  const json &dtype = node["dtype"];
  if (!dtype.is_string())
    return where + "'dtype' must be a string, got " + describe(dtype);
  parsed.entry.dtype = dtype.get<std::string>();
  size_t elementSize = dtypeSize(parsed.entry.dtype);
  if (elementSize == 0)
    return tensor + " has unknown dtype " + inQuotes(parsed.entry.dtype);

  const json &shape = node["shape"];
  if (!shape.is_array())
    return where + "'shape' must be an array, got " + describe(shape);
  std::string why;
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t dim;
    std::string what = "'shape' dimension " + std::to_string(i);
    if (!readNonNegative(shape[i], what, dim, why))
      return where + why;
    if (dim > kMaxInt64)
      return where + what + " is " + std::to_string(dim) + ", too large";
    parsed.entry.shape.push_back(int64_t(dim));
  }
  uint64_t count, needed;
  if (!checkedNumElements(parsed.entry.shape, count) ||
      !checkedBytes(count, elementSize, needed))
    return where + "shape " + formatShape(parsed.entry.shape) + " of " +
           parsed.entry.dtype + " is too large (its size overflows)";

  const json &offsets = node["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    return where + "'data_offsets' must be an array of 2 integers, got " +
           (offsets.is_array() ? std::to_string(offsets.size()) + " elements"
                               : describe(offsets));
  if (!readNonNegative(offsets[0], "'data_offsets' begin", parsed.begin, why) ||
      !readNonNegative(offsets[1], "'data_offsets' end", parsed.end, why))
    return where + why;

  std::string range = "[" + std::to_string(parsed.begin) + ", " +
                      std::to_string(parsed.end) + ")";
  if (parsed.begin > parsed.end || parsed.end > dataSize)
    return tensor + " data " + range + " lies outside the " +
           std::to_string(dataSize) + "-byte data buffer (file truncated?)";
  uint64_t actual = parsed.end - parsed.begin;
  if (actual != needed)
    return tensor + " has " + std::to_string(actual) + " bytes, shape " +
           formatShape(parsed.entry.shape) + " of " + parsed.entry.dtype +
           " needs " + std::to_string(needed);
  parsed.entry.name = name;
  parsed.entry.size = size_t(actual);
  return "";
}

std::string parseMetadata(const json &node,
                          std::map<std::string, std::string> &metadata) {
  if (!node.is_object())
    return "'__metadata__' must be an object of strings, got " + describe(node);
  for (const auto &item : node.items()) {
    if (!item.value().is_string())
      return "'__metadata__' entry " + inQuotes(item.key()) +
             " must be a string, got " + describe(item.value());
    metadata[item.key()] = item.value().get<std::string>();
  }
  return "";
}

/// Parses the header text. nlohmann keeps the last of duplicate keys
/// silently, which would hide a tensor, so a callback watches for them.
std::string parseHeader(const uint8_t *begin, const uint8_t *end,
                        json &header) {
  // nlohmann stops at a NUL as if the input ended, so "{...}\0junk" would
  // pass; JSON allows no NUL anywhere, so reject it up front.
  if (const void *nul = std::memchr(begin, 0, size_t(end - begin)))
    return "has a corrupt header: NUL byte at header offset " +
           std::to_string(static_cast<const uint8_t *>(nul) - begin);
  std::vector<std::set<std::string>> keysInOpenObjects;
  std::string duplicate;
  auto watch = [&](int, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::object_start) {
      keysInOpenObjects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keysInOpenObjects.pop_back();
    } else if (event == json::parse_event_t::key && duplicate.empty() &&
               !keysInOpenObjects.empty() &&
               !keysInOpenObjects.back()
                    .insert(parsed.get<std::string>())
                    .second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  try {
    header = json::parse(begin, end, watch);
  } catch (const json::exception &exception) {
    return "has a corrupt header: " + jsonReason(exception);
  }
  if (!duplicate.empty())
    return "has a corrupt header: duplicate key " + inQuotes(duplicate);
  if (!header.is_object())
    return std::string("has a corrupt header: expected a JSON object, got ") +
           describe(header);
  return "";
}

/// Owns a file descriptor for the span of a read.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Reads all of `path`; on failure returns false with strerror in `why`.
bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes,
                   std::string &why) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  struct stat status;
  if (::fstat(file.fd, &status) != 0) {
    why = std::strerror(errno);
    return false;
  }
  // read() on a directory fails with EISDIR anyway, but its st_size must not
  // size the buffer.
  if (S_ISDIR(status.st_mode)) {
    why = std::strerror(EISDIR);
    return false;
  }
  // One spare byte so that a regular file is read to EOF without regrowing.
  size_t capacity =
      S_ISREG(status.st_mode) ? size_t(status.st_size) + 1 : size_t(1) << 16;
  bytes.resize(capacity);
  size_t used = 0;
  for (;;) {
    if (used == bytes.size())
      bytes.resize(bytes.size() * 2);
    ssize_t count = ::read(file.fd, bytes.data() + used, bytes.size() - used);
    if (count < 0) {
      if (errno == EINTR)
        continue;
      why = std::strerror(errno);
      return false;
    }
    if (count == 0)
      break;
    used += size_t(count);
  }
  bytes.resize(used);
  return true;
}

} // namespace

size_t recur::safetensors::dtypeSize(const std::string &dtype) {
  static const std::pair<const char *, size_t> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  for (const auto &[name, size] : kSizes)
    if (dtype == name)
      return size;
  return 0;
}

int64_t Entry::numElements() const {
  // Unsigned so that an unvalidated, overflowing shape wraps instead of
  // being undefined.
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= uint64_t(dim);
  return int64_t(count);
}

std::unique_ptr<File> File::open(const std::string &path, std::string &error) {
  try {
    std::vector<uint8_t> bytes;
    std::string why;
    if (!readWholeFile(path, bytes, why)) {
      error = oneLine("cannot read safetensors file " + inQuotes(path) + ": " +
                      why);
      return nullptr;
    }
    return parse(std::move(bytes), path, error);
  } catch (const std::exception &exception) {
    error = oneLine("cannot read safetensors file " + inQuotes(path) + ": " +
                    exception.what());
    return nullptr;
  }
}

std::unique_ptr<File> File::parse(std::vector<uint8_t> bytes,
                                  const std::string &origin,
                                  std::string &error) {
  std::string prefix = "safetensors file " + inQuotes(origin) + ": ";
  auto fail = [&](const std::string &message) {
    error = oneLine(prefix + message);
    return nullptr;
  };
  try {
    if (bytes.size() < 8)
      return fail("is truncated: " + std::to_string(bytes.size()) +
                  " bytes, a safetensors file starts with an 8-byte header "
                  "length");
    uint64_t headerSize = 0;
    for (int i = 7; i >= 0; --i)
      headerSize = (headerSize << 8) | bytes[i];
    // Files people pass by mistake are named rather than reported as a
    // corrupt header (only when the start cannot be a safetensors header).
    bool plausible = headerSize <= kMaxHeaderSize &&
                     headerSize <= bytes.size() - 8 && bytes.size() > 8 &&
                     bytes[8] == '{';
    auto startsWith = [&](std::initializer_list<uint8_t> magic) {
      return std::equal(magic.begin(), magic.end(), bytes.begin());
    };
    if (!plausible && startsWith({'P', 'K', 3, 4}))
      return fail("is a zip archive, as torch.save writes, not safetensors: "
                  "save the state_dict with "
                  "safetensors.torch.save_file(model.state_dict(), path)");
    if (!plausible && bytes[0] == 0x80 && bytes[1] >= 2 && bytes[1] <= 5)
      return fail("is a Python pickle (a legacy torch.save file?), not "
                  "safetensors: save the state_dict with "
                  "safetensors.torch.save_file(model.state_dict(), path)");
    if (headerSize > kMaxHeaderSize)
      return fail("has a corrupt header length: " + std::to_string(headerSize) +
                  " bytes, over the " + std::to_string(kMaxHeaderSize) +
                  "-byte limit");
    uint64_t following = bytes.size() - 8;
    if (headerSize > following)
      return fail("is truncated: header says " + std::to_string(headerSize) +
                  " bytes, only " + std::to_string(following) + " follow");

    json header;
    std::string message =
        parseHeader(bytes.data() + 8, bytes.data() + 8 + headerSize, header);
    if (!message.empty())
      return fail(message);

    std::unique_ptr<File> file(new File());
    uint64_t dataSize = following - headerSize;
    std::vector<Parsed> tensors;
    for (const auto &item : header.items()) {
      if (item.key() == "__metadata__") {
        message = parseMetadata(item.value(), file->metadata_);
      } else {
        tensors.emplace_back();
        message =
            parseEntry(item.key(), item.value(), dataSize, tensors.back());
      }
      if (!message.empty())
        return fail(message);
    }

    // Name breaks ties so that the order does not depend on the header's.
    std::sort(tensors.begin(), tensors.end(),
              [](const Parsed &a, const Parsed &b) {
                return std::tie(a.begin, a.end, a.entry.name) <
                       std::tie(b.begin, b.end, b.entry.name);
              });
    // Empty tensors occupy nothing, so only nonempty ones can overlap; in
    // begin order each need only be checked against the furthest end so far.
    const Parsed *furthest = nullptr;
    for (const Parsed &tensor : tensors) {
      if (tensor.begin == tensor.end)
        continue;
      if (furthest && tensor.begin < furthest->end)
        return fail("tensors " + inQuotes(furthest->entry.name) + " [" +
                    std::to_string(furthest->begin) + ", " +
                    std::to_string(furthest->end) + ") and " +
                    inQuotes(tensor.entry.name) + " [" +
                    std::to_string(tensor.begin) + ", " +
                    std::to_string(tensor.end) + ") overlap");
      if (!furthest || tensor.end > furthest->end)
        furthest = &tensor;
    }

    file->bytes_ = std::move(bytes);
    const uint8_t *data = file->bytes_.data() + 8 + headerSize;
    file->entries_.reserve(tensors.size());
    for (Parsed &tensor : tensors) {
      tensor.entry.data = data + tensor.begin;
      file->index_[tensor.entry.name] = file->entries_.size();
      file->entries_.push_back(std::move(tensor.entry));
    }
    return file;
  } catch (const std::exception &exception) {
    return fail(std::string("cannot be loaded: ") + exception.what());
  }
}

const Entry *File::find(const std::string &name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

bool Writer::add(const std::string &name, const std::string &dtype,
                 const std::vector<int64_t> &shape, const void *data,
                 size_t size, std::string &error) {
  const std::string prefix = "safetensors writer: ";
  auto fail = [&](const std::string &message) {
    error = oneLine(prefix + message);
    return false;
  };
  try {
    std::string tensor = "tensor " + inQuotes(name);
    if (name.empty())
      return fail("tensor name is empty");
    if (name == "__metadata__")
      return fail("tensor name '__metadata__' is reserved for metadata");
    if (!isValidUtf8(name))
      return fail(tensor + " has a name that is not valid UTF-8");
    for (const Pending &pending : tensors_)
      if (pending.name == name)
        return fail("duplicate " + tensor);
    size_t elementSize = dtypeSize(dtype);
    if (elementSize == 0)
      return fail(tensor + " has unknown dtype " + inQuotes(dtype));
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0)
        return fail(tensor + ": shape " + formatShape(shape) + " dimension " +
                    std::to_string(i) + " is negative");
    uint64_t count, needed;
    if (!checkedNumElements(shape, count) ||
        !checkedBytes(count, elementSize, needed))
      return fail(tensor + ": shape " + formatShape(shape) + " of " + dtype +
                  " is too large (its size overflows)");
    if (uint64_t(size) != needed)
      return fail(tensor + " has " + std::to_string(size) + " bytes, shape " +
                  formatShape(shape) + " of " + dtype + " needs " +
                  std::to_string(needed));
    if (size != 0 && !data)
      return fail(tensor + " has null data");
    const uint8_t *first = static_cast<const uint8_t *>(data);
    tensors_.push_back(
        {name, dtype, shape, std::vector<uint8_t>(first, first + size)});
    return true;
  } catch (const std::exception &exception) {
    return fail("cannot add tensor " + inQuotes(name) + ": " +
                exception.what());
  }
}

void Writer::setMetadata(const std::string &key, const std::string &value) {
  try {
    if (!isValidUtf8(key) || !isValidUtf8(value)) {
      if (deferredError_.empty())
        deferredError_ =
            "metadata entry " + inQuotes(key) + " is not valid UTF-8";
      return;
    }
    metadata_[key] = value;
  } catch (...) {
    metadataLost_ = true;
  }
}

bool Writer::serialize(std::vector<uint8_t> &out, std::string &error) const {
  if (!deferredError_.empty()) {
    error = deferredError_;
    return false;
  }
  if (metadataLost_) {
    error = "metadata was lost: out of memory";
    return false;
  }
  // Insertion order keeps the header readable alongside the data layout.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) {
    nlohmann::ordered_json &metadata = header["__metadata__"];
    metadata = nlohmann::ordered_json::object();
    for (const auto &[key, value] : metadata_)
      metadata[key] = value;
  }
  uint64_t offset = 0;
  for (const Pending &tensor : tensors_) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = tensor.dtype;
    entry["shape"] = tensor.shape;
    entry["data_offsets"] = {offset, offset + tensor.bytes.size()};
    header[tensor.name] = std::move(entry);
    offset += tensor.bytes.size();
  }
  std::string text = header.dump();
  // 8 + the header length is a multiple of 8, so the data buffer starts
  // 8-byte aligned wherever the file is loaded to an aligned address.
  text.resize((text.size() + 7) / 8 * 8, ' ');

  out.clear();
  out.reserve(8 + text.size() + offset);
  uint64_t headerSize = text.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(headerSize >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  for (const Pending &tensor : tensors_)
    out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  return true;
}

std::vector<uint8_t> Writer::toBytes() const {
  try {
    std::vector<uint8_t> bytes;
    std::string error;
    if (serialize(bytes, error))
      return bytes;
  } catch (...) {
  }
  return {};
}

bool Writer::write(const std::string &path, std::string &error) const {
  std::string prefix = "cannot write safetensors file " + inQuotes(path) + ": ";
  try {
    std::vector<uint8_t> bytes;
    std::string why;
    if (!serialize(bytes, why)) {
      error = oneLine(prefix + why);
      return false;
    }
    std::FILE *stream = std::fopen(path.c_str(), "wb");
    if (!stream) {
      error = oneLine(prefix + std::strerror(errno));
      return false;
    }
    bool written =
        std::fwrite(bytes.data(), 1, bytes.size(), stream) == bytes.size();
    int savedErrno = errno;
    // fclose flushes, so its failure is a write failure too (a full disk).
    if (std::fclose(stream) != 0 && written) {
      written = false;
      savedErrno = errno;
    }
    if (!written) {
      // A partial file would later fail to load with a confusing message.
      std::remove(path.c_str());
      error = oneLine(prefix + std::strerror(savedErrno));
      return false;
    }
    return true;
  } catch (const std::exception &exception) {
    error = oneLine(prefix + exception.what());
    return false;
  }
}
