// The runtime's reduction kernel and 16-bit float conversions, against bit patterns worked out
// by hand from the IEEE 754 binary16 and bfloat16 layouts.
#include "bridge/host/data_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace nbox::host {
namespace {

TEST(HalfConversion, ExactValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);               // largest finite
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(HalfToFloat(0x4380), 3.75f);                     // 1.875 * 2
}

TEST(HalfConversion, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9: goes up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  // 0.1 = 0x2E66 (0.0999755859375), the nearest half.
  EXPECT_EQ(FloatToHalf(0.1f), 0x2E66);
  // Subnormals: 1.5 * 2^-24 ties to 2 units, 0.75 * 2^-24 rounds to 1, 2^-25 ties to 0.
  EXPECT_EQ(FloatToHalf(1.5f * std::ldexp(1.0f, -24)), 0x0002);
  EXPECT_EQ(FloatToHalf(0.75f * std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  // Rounding up out of the subnormals gives the smallest normal.
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.75f, -24)), 0x0400);
  // 65520 is halfway between 65504 and 65536 (not representable): ties to even = infinity.
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(1e9f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-1e9f), 0xFC00);
}

TEST(HalfConversion, InfinityAndNan) {
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_EQ(HalfToFloat(0xFC00), -std::numeric_limits<float>::infinity());
}

TEST(Bfloat16Conversion, TruncatesWithRoundToNearestEven) {
  EXPECT_EQ(FloatToBfloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBfloat16(-2.0f), 0xC000);
  // bfloat16 keeps 7 mantissa bits: 1 + 2^-8 ties to 1, 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(FloatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(FloatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(Bfloat16ToFloat(0x3F82), 1.015625f);
  EXPECT_EQ(Bfloat16ToFloat(0x4040), 3.0f);
  EXPECT_TRUE(
      std::isnan(Bfloat16ToFloat(FloatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

template <typename T>
std::vector<T> Reduced(std::vector<T> dst, const std::vector<T>& src, nboxDataType_t type,
                       nboxRedOp_t op) {
  ReduceInto(dst.data(), src.data(), dst.size(), type, op);
  return dst;
}

TEST(ReduceInto, IntegersWrapAround) {
  EXPECT_EQ(Reduced<int8_t>({100, -128, 5}, {100, -1, 6}, nboxInt8, nboxSum),
            (std::vector<int8_t>{-56, 127, 11}));
  EXPECT_EQ(Reduced<uint8_t>({16, 255, 3}, {16, 2, 5}, nboxUint8, nboxProd),
            (std::vector<uint8_t>{0, 254, 15}));
  EXPECT_EQ(Reduced<int32_t>({INT32_MAX, -7}, {1, 3}, nboxInt32, nboxSum),
            (std::vector<int32_t>{INT32_MIN, -4}));
  EXPECT_EQ(Reduced<uint64_t>({UINT64_MAX, 1ull << 63}, {2, 2}, nboxUint64, nboxProd),
            (std::vector<uint64_t>{UINT64_MAX - 1, 0}));
  EXPECT_EQ(Reduced<int64_t>({INT64_MIN, 5}, {-1, 6}, nboxInt64, nboxProd),
            (std::vector<int64_t>{INT64_MIN, 30}));
}

TEST(ReduceInto, MaxAndMinCompareAsTheType) {
  EXPECT_EQ(Reduced<int8_t>({-5, 7}, {3, -9}, nboxInt8, nboxMax), (std::vector<int8_t>{3, 7}));
  EXPECT_EQ(Reduced<uint32_t>({5, 0xFFFFFFFFu}, {3, 1}, nboxUint32, nboxMin),
            (std::vector<uint32_t>{3, 1}));
  EXPECT_EQ(Reduced<uint64_t>({1, 1ull << 63}, {2, 5}, nboxUint64, nboxMax),
            (std::vector<uint64_t>{2, 1ull << 63}));
  EXPECT_EQ(Reduced<double>({-0.5, 2.5}, {-1.5, 2.25}, nboxFloat64, nboxMin),
            (std::vector<double>{-1.5, 2.25}));
}

TEST(ReduceInto, FloatsAndSixteenBitFloats) {
  EXPECT_EQ(Reduced<float>({1.5f, -2.0f, 3.0f}, {2.25f, 0.5f, -4.0f}, nboxFloat32, nboxProd),
            (std::vector<float>{3.375f, -1.0f, -12.0f}));
  // half: 1.5 + 2.25 = 3.75 (0x4380); 1 + 2^-11 (0x1000) ties back to 1 (even).
  EXPECT_EQ(Reduced<uint16_t>({0x3E00, 0x3C00}, {0x4080, 0x1000}, nboxFloat16, nboxSum),
            (std::vector<uint16_t>{0x4380, 0x3C00}));
  EXPECT_EQ(Reduced<uint16_t>({0xC000}, {0x3C00}, nboxFloat16, nboxMax),
            (std::vector<uint16_t>{0x3C00}));
  // bfloat16: 1 * 3 = 3 (0x4040); 2 + -2 = +0.
  EXPECT_EQ(Reduced<uint16_t>({0x3F80, 0x4000}, {0x4040, 0xC000}, nboxBfloat16, nboxProd),
            (std::vector<uint16_t>{0x4040, 0xC080}));
  EXPECT_EQ(Reduced<uint16_t>({0x4000}, {0xC000}, nboxBfloat16, nboxSum),
            (std::vector<uint16_t>{0x0000}));
}

TEST(DataTypes, SizesAndValidity) {
  EXPECT_EQ(ElementBytes(nboxInt8), 1u);
  EXPECT_EQ(ElementBytes(nboxFloat16), 2u);
  EXPECT_EQ(ElementBytes(nboxBfloat16), 2u);
  EXPECT_EQ(ElementBytes(nboxUint32), 4u);
  EXPECT_EQ(ElementBytes(nboxFloat64), 8u);
  EXPECT_FALSE(IsValid(static_cast<nboxDataType_t>(10)));
  EXPECT_FALSE(IsValid(static_cast<nboxRedOp_t>(4)));
  EXPECT_EQ(ToString(nboxBfloat16), "bfloat16");
  EXPECT_EQ(ToString(nboxMin), "min");
}

}  // namespace
}  // namespace nbox::host
