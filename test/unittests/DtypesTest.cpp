//===- DtypesTest.cpp - bf16 conversions ----------------------------------===//
//
// bf16 <-> f32 against bit patterns worked out by hand: exact values, the
// rounding of the 16 dropped bits (below, above and at half, ties to even),
// overflow to infinity, NaN; a whole f32 payload converted.
//
//===----------------------------------------------------------------------===//

#include "Dtypes.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace recur;

namespace {

float fromBits(uint32_t word) {
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

TEST(DtypesTest, Bf16WidensExactly) {
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(bf16ToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::isinf(bf16ToFloat(0x7f80)));
}

TEST(DtypesTest, Bf16RoundsToNearestTiesToEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(fromBits(0x3f807fff)), 0x3f80); // below half: down
  EXPECT_EQ(floatToBf16(fromBits(0x3f808001)), 0x3f81); // above half: up
  EXPECT_EQ(floatToBf16(fromBits(0x3f808000)), 0x3f80); // tie, even: down
  EXPECT_EQ(floatToBf16(fromBits(0x3f818000)), 0x3f82); // tie, odd: up
  EXPECT_EQ(floatToBf16(fromBits(0xbf818000)), 0xbf82); // the same, negative
  // Past the largest bf16 by more than half a unit: infinity.
  EXPECT_EQ(floatToBf16(fromBits(0x7f7fffff)), 0x7f80);
}

TEST(DtypesTest, Bf16KeepsNaN) {
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  // A NaN whose payload lies in the dropped bits stays a NaN, not infinity.
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(fromBits(0x7f800001)))));
}

// A weights file's f32 payload, at an odd address, becomes the bf16 bytes a
// bf16 weight binds: each value rounded, little-endian.
TEST(DtypesTest, FloatsToBf16BytesRoundEachValue) {
  uint32_t words[] = {0x3f808001, 0xbf818000, 0x7f800001};
  unsigned char buffer[1 + sizeof words];
  std::memcpy(buffer + 1, words, sizeof words);
  std::vector<uint8_t> bytes = floatsToBf16Bytes(buffer + 1, 3);
  ASSERT_EQ(bytes.size(), 6u);
  uint16_t bits[3];
  std::memcpy(bits, bytes.data(), sizeof bits);
  EXPECT_EQ(bits[0], 0x3f81);
  EXPECT_EQ(bits[1], 0xbf82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(bits[2])));
}

TEST(DtypesTest, DtypePredicates) {
  EXPECT_TRUE(isF32({kDLFloat, 32, 1}));
  EXPECT_FALSE(isF32({kDLFloat, 32, 4}));
  EXPECT_TRUE(isBf16({kDLBfloat, 16, 1}));
  EXPECT_FALSE(isBf16({kDLFloat, 16, 1}));
}

} // namespace
