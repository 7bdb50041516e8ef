//===- SafetensorsTest.cpp - Reading and writing safetensors files --------===//
//
// Round trips through the Writer and File, a file assembled byte by byte from
// the format description (independent of the Writer), and one test per
// validation message.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace recur::safetensors;
using testing::HasSubstr;
using testing::Not;

namespace {

constexpr const char *kOrigin = "m.safetensors";
constexpr const char *kPrefix = "safetensors file 'm.safetensors': ";

template <typename T> std::vector<uint8_t> asBytes(const std::vector<T> &v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(T));
  if (!bytes.empty())
    std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

/// An 8-byte little-endian `headerSize`, then `header` and `data` verbatim.
std::vector<uint8_t> makeFile(uint64_t headerSize, const std::string &header,
                              const std::vector<uint8_t> &data = {}) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(uint8_t(headerSize >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::vector<uint8_t> makeFile(const std::string &header,
                              const std::vector<uint8_t> &data = {}) {
  return makeFile(header.size(), header, data);
}

/// A header holding one tensor 't'.
std::string oneTensor(const std::string &fields) {
  return "{\"t\": {" + fields + "}}";
}

/// Parses `bytes`, expecting failure; returns the message.
std::string parseError(const std::vector<uint8_t> &bytes) {
  std::string error;
  std::unique_ptr<File> file = File::parse(bytes, kOrigin, error);
  EXPECT_EQ(file, nullptr);
  EXPECT_THAT(error, Not(HasSubstr("\n")));
  return error;
}

std::string uniquePath(const std::string &stem) {
  return testing::TempDir() + "recur_safetensors_" + stem + "_" +
         std::to_string(::getpid()) + ".safetensors";
}

struct Sample {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// One tensor of every dtype, a scalar and an empty tensor.
std::vector<Sample> samples() {
  return {
      {"weight", "F32", {2, 3}, asBytes<float>({1, 2, 3, 4, 5, 6.5f})},
      {"bias", "F64", {2}, asBytes<double>({-1.25, 1e300})},
      {"step", "I64", {}, asBytes<int64_t>({-42})},
      {"half", "F16", {2}, {0x00, 0x3c, 0x00, 0xc0}},
      {"brain", "BF16", {1, 1}, {0x80, 0x3f}},
      {"ids", "I32", {3}, asBytes<int32_t>({7, -1, 1 << 30})},
      {"short", "I16", {2}, asBytes<int16_t>({-300, 300})},
      {"tiny", "I8", {3}, {0x80, 0x00, 0x7f}},
      {"empty", "U8", {0, 4}, {}},
      {"mask", "BOOL", {2}, {1, 0}},
  };
}

Writer sampleWriter() {
  Writer writer;
  for (const Sample &sample : samples()) {
    std::string error;
    EXPECT_TRUE(writer.add(sample.name, sample.dtype, sample.shape,
                           sample.bytes.data(), sample.bytes.size(), error))
        << error;
  }
  writer.setMetadata("format", "pt");
  writer.setMetadata("note", "λ: \"quoted\"\nnext line");
  return writer;
}

void expectSamples(const File &file) {
  std::vector<Sample> expected = samples();
  // The writer lays data out in insertion order, which is offset order.
  ASSERT_EQ(file.entries().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Entry &entry = file.entries()[i];
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(entry.name, expected[i].name);
    EXPECT_EQ(entry.dtype, expected[i].dtype);
    EXPECT_EQ(entry.shape, expected[i].shape);
    ASSERT_EQ(entry.size, expected[i].bytes.size());
    EXPECT_EQ(std::vector<uint8_t>(entry.data, entry.data + entry.size),
              expected[i].bytes);
    EXPECT_EQ(file.find(expected[i].name), &entry);
  }
  EXPECT_EQ(file.find("step")->numElements(), 1);
  EXPECT_EQ(file.find("empty")->numElements(), 0);
  EXPECT_EQ(file.find("weight")->numElements(), 6);
  EXPECT_EQ(file.find("absent"), nullptr);
  EXPECT_EQ(file.metadata(),
            (std::map<std::string, std::string>{
                {"format", "pt"}, {"note", "λ: \"quoted\"\nnext line"}}));
}

TEST(SafetensorsTest, DtypeSizes) {
  EXPECT_EQ(dtypeSize("F64"), 8u);
  EXPECT_EQ(dtypeSize("F32"), 4u);
  EXPECT_EQ(dtypeSize("F16"), 2u);
  EXPECT_EQ(dtypeSize("BF16"), 2u);
  EXPECT_EQ(dtypeSize("I64"), 8u);
  EXPECT_EQ(dtypeSize("I32"), 4u);
  EXPECT_EQ(dtypeSize("I16"), 2u);
  EXPECT_EQ(dtypeSize("I8"), 1u);
  EXPECT_EQ(dtypeSize("U8"), 1u);
  EXPECT_EQ(dtypeSize("BOOL"), 1u);
  EXPECT_EQ(dtypeSize("f32"), 0u);
  EXPECT_EQ(dtypeSize("F8_E4M3"), 0u);
  EXPECT_EQ(dtypeSize(""), 0u);
}

TEST(SafetensorsTest, RoundTripInMemory) {
  std::vector<uint8_t> bytes = sampleWriter().toBytes();
  ASSERT_GE(bytes.size(), 8u);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8); // Little-endian host.
  EXPECT_EQ(headerSize % 8, 0u) << "data must start 8-byte aligned";
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes[8 + headerSize], 0x00) << "first byte of 'weight' (1.0f)";

  std::string error;
  std::unique_ptr<File> file = File::parse(bytes, kOrigin, error);
  ASSERT_NE(file, nullptr) << error;
  expectSamples(*file);
}

TEST(SafetensorsTest, RoundTripThroughDisk) {
  std::string path = uniquePath("roundtrip");
  std::string error;
  ASSERT_TRUE(sampleWriter().write(path, error)) << error;
  std::unique_ptr<File> file = File::open(path, error);
  std::remove(path.c_str());
  ASSERT_NE(file, nullptr) << error;
  expectSamples(*file);
}

TEST(SafetensorsTest, EmptyWriterMakesAValidFile) {
  std::vector<uint8_t> bytes = Writer().toBytes();
  EXPECT_EQ(bytes, makeFile("{}      "));
  std::string error;
  std::unique_ptr<File> file = File::parse(bytes, kOrigin, error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_TRUE(file->entries().empty());
  EXPECT_TRUE(file->metadata().empty());
}

TEST(SafetensorsTest, HandcraftedFile) {
  // Unpadded header, keys out of offset order, metadata in the middle and
  // whitespace inside, as other writers may produce.
  std::string header =
      "{\"b\": {\"dtype\": \"I32\", \"shape\": [2], \"data_offsets\": [8, 16]},"
      " \"__metadata__\": {\"format\": \"pt\"},"
      " \"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      " \"s\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[16,17]},"
      " \"z\":{\"dtype\":\"F64\",\"shape\":[3,0],\"data_offsets\":[17,17]}}";
  ASSERT_NE(header.size() % 8, 0u) << "the point is an unpadded header";
  std::vector<uint8_t> bytes;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes.push_back(uint8_t((n >> (8 * i)) & 0xff));
  bytes.insert(bytes.end(), header.begin(), header.end());
  // a = {1.0f, -2.5f}, b = {7, -1}, s = 0xab, all little-endian.
  for (uint8_t byte : {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0, 0x07,
                       0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xab})
    bytes.push_back(byte);

  std::string error;
  std::unique_ptr<File> file = File::parse(bytes, kOrigin, error);
  ASSERT_NE(file, nullptr) << error;
  ASSERT_EQ(file->entries().size(), 4u);
  const Entry &a = file->entries()[0];
  const Entry &b = file->entries()[1];
  const Entry &s = file->entries()[2];
  const Entry &z = file->entries()[3];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(z.name, "z");

  float floats[2];
  ASSERT_EQ(a.size, sizeof(floats));
  std::memcpy(floats, a.data, sizeof(floats));
  EXPECT_EQ(floats[0], 1.0f);
  EXPECT_EQ(floats[1], -2.5f);
  int32_t ints[2];
  ASSERT_EQ(b.size, sizeof(ints));
  std::memcpy(ints, b.data, sizeof(ints));
  EXPECT_EQ(ints[0], 7);
  EXPECT_EQ(ints[1], -1);
  EXPECT_EQ(b.dtype, "I32");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2}));
  EXPECT_TRUE(s.shape.empty());
  ASSERT_EQ(s.size, 1u);
  EXPECT_EQ(s.data[0], 0xab);
  EXPECT_EQ(z.size, 0u);
  EXPECT_EQ(z.numElements(), 0);
  EXPECT_EQ(file->metadata().at("format"), "pt");
}

TEST(SafetensorsTest, WriterOutputIsByteExact) {
  Writer writer;
  std::string error;
  uint8_t data[] = {1, 2, 3};
  ASSERT_TRUE(writer.add("x", "U8", {3}, data, 3, error)) << error;
  writer.setMetadata("k", "v");
  std::string header = "{\"__metadata__\":{\"k\":\"v\"},"
                       "\"x\":{\"dtype\":\"U8\",\"shape\":[3],"
                       "\"data_offsets\":[0,3]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  EXPECT_EQ(writer.toBytes(), makeFile(header, {1, 2, 3}));
}

TEST(SafetensorsTest, AdjacentAndEmptyTensorsDoNotOverlap) {
  std::string header =
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
      "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]},"
      "\"f\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]},"
      "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]},"
      "\"huge\":{\"dtype\":\"F64\",\"shape\":[0,4611686018427387904,4],"
      "\"data_offsets\":[8,8]}}";
  std::string error;
  std::unique_ptr<File> file =
      File::parse(makeFile(header, std::vector<uint8_t>(8)), kOrigin, error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->entries().size(), 5u);
}

//===----------------------------------------------------------------------===//
// File validation, one message each
//===----------------------------------------------------------------------===//

TEST(SafetensorsTest, FewerThanEightBytes) {
  EXPECT_EQ(parseError({1, 0, 0, 0, 0}),
            std::string(kPrefix) +
                "is truncated: 5 bytes, a safetensors file starts with an "
                "8-byte header length");
}

TEST(SafetensorsTest, HeaderLongerThanFile) {
  EXPECT_THAT(parseError(makeFile(100, "{}")),
              HasSubstr(std::string(kPrefix) +
                        "is truncated: header says 100 bytes, only 2 follow"));
}

TEST(SafetensorsTest, AbsurdHeaderLength) {
  EXPECT_THAT(parseError(makeFile(uint64_t(1) << 40, "{}")),
              HasSubstr(std::string(kPrefix) +
                        "has a corrupt header length: 1099511627776 bytes, "
                        "over the 100000000-byte limit"));
}

TEST(SafetensorsTest, HeaderNotJson) {
  std::string error = parseError(makeFile("{\"t\": {\"dtype\": "));
  EXPECT_THAT(error,
              HasSubstr(std::string(kPrefix) + "has a corrupt header: "));
  EXPECT_THAT(error, HasSubstr("parse error"));
  EXPECT_THAT(error, Not(HasSubstr("[json.exception")));
}

TEST(SafetensorsTest, HeaderWithNulByte) {
  // nlohmann-json alone would stop at the NUL and accept the file.
  std::string header = "{}";
  header += '\0';
  header += "junk";
  EXPECT_THAT(parseError(makeFile(header)),
              HasSubstr("has a corrupt header: NUL byte at header offset 2"));
}

TEST(SafetensorsTest, HeaderNotObject) {
  EXPECT_THAT(
      parseError(makeFile("[1, 2]  ")),
      HasSubstr(std::string(kPrefix) +
                "has a corrupt header: expected a JSON object, got an array"));
}

TEST(SafetensorsTest, DuplicateKey) {
  std::string entry = "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}";
  EXPECT_THAT(
      parseError(makeFile("{\"t\":" + entry + ",\"t\":" + entry + "}", {0})),
      HasSubstr("has a corrupt header: duplicate key 't'"));
  EXPECT_THAT(parseError(makeFile(
                  oneTensor("\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],"
                            "\"data_offsets\":[0,1]"),
                  {0})),
              HasSubstr("has a corrupt header: duplicate key 'dtype'"));
}

TEST(SafetensorsTest, EntryNotObject) {
  EXPECT_THAT(parseError(makeFile("{\"t\": 3}")),
              HasSubstr(std::string(kPrefix) +
                        "tensor 't': expected an object, got 3"));
}

TEST(SafetensorsTest, EntryMissingField) {
  EXPECT_THAT(
      parseError(makeFile(oneTensor("\"shape\":[],\"data_offsets\":[0,1]"))),
      HasSubstr(std::string(kPrefix) + "tensor 't': missing 'dtype'"));
  EXPECT_THAT(parseError(makeFile(
                  oneTensor("\"dtype\":\"U8\",\"data_offsets\":[0,1]"))),
              HasSubstr("tensor 't': missing 'shape'"));
  EXPECT_THAT(parseError(makeFile(oneTensor("\"dtype\":\"U8\",\"shape\":[]"))),
              HasSubstr("tensor 't': missing 'data_offsets'"));
}

TEST(SafetensorsTest, EntryWrongJsonTypes) {
  EXPECT_THAT(parseError(makeFile(oneTensor(
                  "\"dtype\":32,\"shape\":[],\"data_offsets\":[0,4]"))),
              HasSubstr("tensor 't': 'dtype' must be a string, got 32"));
  EXPECT_THAT(
      parseError(makeFile(oneTensor(
          "\"dtype\":\"F32\",\"shape\":\"2x3\",\"data_offsets\":[0,4]"))),
      HasSubstr("tensor 't': 'shape' must be an array, got a string"));
  EXPECT_THAT(
      parseError(makeFile(oneTensor(
          "\"dtype\":\"F32\",\"shape\":[1, 2.5],\"data_offsets\":[0,4]"))),
      HasSubstr("tensor 't': 'shape' dimension 1 must be an integer, got 2.5"));
  EXPECT_THAT(parseError(makeFile(oneTensor(
                  "\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0]"))),
              HasSubstr("tensor 't': 'data_offsets' must be an array of 2 "
                        "integers, got 1 elements"));
  EXPECT_THAT(
      parseError(makeFile(oneTensor(
          "\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,\"4\"]"))),
      HasSubstr("tensor 't': 'data_offsets' end must be an integer, "
                "got a string"));
}

TEST(SafetensorsTest, NegativeDimension) {
  EXPECT_THAT(
      parseError(makeFile(oneTensor(
          "\"dtype\":\"F32\",\"shape\":[2,-3],\"data_offsets\":[0,4]"))),
      HasSubstr(std::string(kPrefix) +
                "tensor 't': 'shape' dimension 1 is -3, must be >= 0"));
  EXPECT_THAT(
      parseError(makeFile(
          oneTensor("\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[-4,0]"))),
      HasSubstr("tensor 't': 'data_offsets' begin is -4, must be >= 0"));
}

TEST(SafetensorsTest, DimensionBeyondInt64) {
  EXPECT_THAT(
      parseError(makeFile(oneTensor("\"dtype\":\"U8\","
                                    "\"shape\":[9223372036854775808],"
                                    "\"data_offsets\":[0,0]"))),
      HasSubstr("tensor 't': 'shape' dimension 0 is 9223372036854775808, too "
                "large"));
}

TEST(SafetensorsTest, UnknownDtype) {
  EXPECT_THAT(
      parseError(makeFile(oneTensor(
          "\"dtype\":\"F8_E4M3\",\"shape\":[],\"data_offsets\":[0,1]"))),
      HasSubstr(std::string(kPrefix) +
                "tensor 't' has unknown dtype 'F8_E4M3'"));
}

TEST(SafetensorsTest, DataOutsideBuffer) {
  EXPECT_THAT(
      parseError(makeFile(
          oneTensor("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"),
          {0, 0, 0, 0})),
      HasSubstr(std::string(kPrefix) +
                "tensor 't' data [0, 8) lies outside the 4-byte data buffer "
                "(file truncated?)"));
  EXPECT_THAT(
      parseError(makeFile(
          oneTensor("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]"),
          std::vector<uint8_t>(8))),
      HasSubstr("tensor 't' data [8, 4) lies outside the 8-byte data buffer"));
}

TEST(SafetensorsTest, SizeDoesNotMatchShape) {
  EXPECT_THAT(
      parseError(makeFile(
          oneTensor(
              "\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]"),
          std::vector<uint8_t>(24))),
      HasSubstr(std::string(kPrefix) +
                "tensor 't' has 20 bytes, shape [2, 3] of F32 needs 24"));
  EXPECT_THAT(parseError(makeFile(oneTensor("\"dtype\":\"I64\",\"shape\":[],"
                                            "\"data_offsets\":[0,4]"),
                                  std::vector<uint8_t>(8))),
              HasSubstr("tensor 't' has 4 bytes, shape [] of I64 needs 8"));
}

TEST(SafetensorsTest, OverlappingTensors) {
  std::string header =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
  EXPECT_THAT(parseError(makeFile(header, std::vector<uint8_t>(12))),
              HasSubstr(std::string(kPrefix) +
                        "tensors 'a' [0, 8) and 'b' [4, 12) overlap"));
  // One tensor inside another; the shorter sorts first at equal begins.
  header = "{\"big\":{\"dtype\":\"U8\",\"shape\":[16],\"data_offsets\":[0,16]},"
           "\"x\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
           "\"y\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[10,12]}}";
  EXPECT_THAT(parseError(makeFile(header, std::vector<uint8_t>(16))),
              HasSubstr("tensors 'x' [0, 2) and 'big' [0, 16) overlap"));
}

TEST(SafetensorsTest, MetadataNotObjectOfStrings) {
  EXPECT_THAT(parseError(makeFile("{\"__metadata__\": [\"a\"]}")),
              HasSubstr(std::string(kPrefix) +
                        "'__metadata__' must be an object of strings, got an "
                        "array"));
  EXPECT_THAT(
      parseError(makeFile("{\"__metadata__\": {\"epoch\": 3}}")),
      HasSubstr("'__metadata__' entry 'epoch' must be a string, got 3"));
}

TEST(SafetensorsTest, ShapeProductOverflows) {
  // 2^62 * 4 elements overflows int64; 2^61 * 2 F64 elements fit but their
  // byte count (2^65) does not.
  EXPECT_THAT(parseError(makeFile(oneTensor(
                  "\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],"
                  "\"data_offsets\":[0,0]"))),
              HasSubstr(std::string(kPrefix) +
                        "tensor 't': shape [4611686018427387904, 4] of F32 is "
                        "too large"));
  EXPECT_THAT(parseError(makeFile(oneTensor(
                  "\"dtype\":\"F64\",\"shape\":[2305843009213693952,2],"
                  "\"data_offsets\":[0,0]"))),
              HasSubstr("tensor 't': shape [2305843009213693952, 2] of F64 is "
                        "too large"));
}

TEST(SafetensorsTest, MessagesAreOneLineOfUtf8) {
  // A JSON-escaped newline in a name, and a raw byte that is not UTF-8 which
  // nlohmann quotes in its message.
  EXPECT_THAT(parseError(makeFile("{\"a\\nb\": 3}")),
              HasSubstr("tensor 'a\\nb': expected an object, got 3"));
  std::string error = parseError(makeFile("{\"\xff\": 3}"));
  EXPECT_THAT(error, HasSubstr("has a corrupt header: "));
  EXPECT_THAT(error, HasSubstr("\\xff"));
  EXPECT_THAT(error, Not(HasSubstr("\xff")));
  EXPECT_THAT(parseError(makeFile(oneTensor("\"dtype\":\"λ\",\"shape\":[],"
                                            "\"data_offsets\":[0,1]"))),
              HasSubstr("has unknown dtype 'λ'"));
}

//===----------------------------------------------------------------------===//
// open and write
//===----------------------------------------------------------------------===//

TEST(SafetensorsTest, OpenMissingFile) {
  std::string path = uniquePath("missing");
  std::string error;
  EXPECT_EQ(File::open(path, error), nullptr);
  EXPECT_EQ(error, "cannot read safetensors file '" + path +
                       "': No such file or directory");
}

TEST(SafetensorsTest, OpenDirectory) {
  std::string path = uniquePath("directory");
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  std::string error;
  EXPECT_EQ(File::open(path, error), nullptr);
  ::rmdir(path.c_str());
  EXPECT_EQ(error,
            "cannot read safetensors file '" + path + "': Is a directory");
}

TEST(SafetensorsTest, OpenNamesThePathInParseErrors) {
  std::string path = uniquePath("short");
  std::ofstream(path, std::ios::binary) << "abc";
  std::string error;
  EXPECT_EQ(File::open(path, error), nullptr);
  std::remove(path.c_str());
  EXPECT_EQ(error, "safetensors file '" + path +
                       "': is truncated: 3 bytes, a safetensors file starts "
                       "with an 8-byte header length");
}

TEST(SafetensorsTest, WriteToMissingDirectory) {
  std::string path = uniquePath("no_such_dir") + "/out.safetensors";
  std::string error;
  EXPECT_FALSE(sampleWriter().write(path, error));
  EXPECT_EQ(error, "cannot write safetensors file '" + path +
                       "': No such file or directory");
}

//===----------------------------------------------------------------------===//
// Writer::add validation
//===----------------------------------------------------------------------===//

TEST(SafetensorsTest, WriterRejectsBadTensors) {
  Writer writer;
  std::string error;
  float data[6] = {};
  ASSERT_TRUE(writer.add("w", "F32", {2, 3}, data, sizeof(data), error));

  EXPECT_FALSE(writer.add("x", "F31", {2, 3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("tensor 'x' has unknown dtype 'F31'"));
  EXPECT_FALSE(writer.add("x", "F32", {2, 3}, data, 20, error));
  EXPECT_THAT(error, HasSubstr("tensor 'x' has 20 bytes, shape [2, 3] of F32 "
                               "needs 24"));
  EXPECT_FALSE(writer.add("w", "F32", {2, 3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("duplicate tensor 'w'"));
  EXPECT_FALSE(writer.add("", "F32", {2, 3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("tensor name is empty"));
  EXPECT_FALSE(
      writer.add("__metadata__", "F32", {2, 3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("'__metadata__' is reserved"));
  EXPECT_FALSE(writer.add("x", "F32", {-2, -3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("shape [-2, -3] dimension 0 is negative"));
  EXPECT_FALSE(writer.add("x", "F32", {int64_t(1) << 62, 4}, data, 0, error));
  EXPECT_THAT(error, HasSubstr("is too large"));
  EXPECT_FALSE(writer.add("\xff", "F32", {2, 3}, data, sizeof(data), error));
  EXPECT_THAT(error, HasSubstr("not valid UTF-8"));

  // The rejected tensors left no trace.
  std::unique_ptr<File> file = File::parse(writer.toBytes(), kOrigin, error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->entries().size(), 1u);
}

TEST(SafetensorsTest, WriterReportsBadMetadataOnWrite) {
  Writer writer;
  writer.setMetadata("key", "\xc3\x28");
  EXPECT_TRUE(writer.toBytes().empty());
  std::string path = uniquePath("bad_metadata");
  std::string error;
  EXPECT_FALSE(writer.write(path, error));
  EXPECT_EQ(error, "cannot write safetensors file '" + path +
                       "': metadata entry 'key' is not valid UTF-8");
  struct stat status;
  EXPECT_NE(::stat(path.c_str(), &status), 0) << "no file should be left";
}

} // namespace
