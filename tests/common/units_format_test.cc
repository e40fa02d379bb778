// Human-readable forms: three significant digits in the largest unit the value reaches.
#include <gtest/gtest.h>

#include "common/units.h"

namespace nbox {
namespace {

TEST(FormatRate, ThreeSignificantDigitsDecimalPrefixes) {
  EXPECT_EQ(FormatRate(100e9), "100 Gb/s");
  EXPECT_EQ(FormatRate(25e9), "25.0 Gb/s");
  EXPECT_EQ(FormatRate(1.5e6), "1.50 Mb/s");
  EXPECT_EQ(FormatRate(400e9), "400 Gb/s");
  EXPECT_EQ(FormatRate(1.6e12), "1.60 Tb/s");
  EXPECT_EQ(FormatRate(999.9e9), "1.00 Tb/s");  // rounding carries into the next unit
  EXPECT_EQ(FormatRate(12), "12.0 b/s");
  EXPECT_EQ(FormatRate(0), "0 b/s");
}

TEST(FormatBytes, BinaryPrefixesAndWholeBytes) {
  EXPECT_EQ(FormatBytes(25.0 * 1024 * 1024), "25.0 MiB");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1), "1 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(1000), "0.977 KiB");  // 1000/1024
  EXPECT_EQ(FormatBytes(4e9), "3.73 GiB");    // 4e9/2^30 = 3.7253
  EXPECT_EQ(FormatBytes(0), "0 B");
}

TEST(FormatSeconds, FromPicosecondsToSeconds) {
  EXPECT_EQ(FormatSeconds(1.25e-3), "1.25 ms");
  EXPECT_EQ(FormatSeconds(1), "1.00 s");
  EXPECT_EQ(FormatSeconds(2.5e-7), "250 ns");
  EXPECT_EQ(FormatSeconds(12.34e-6), "12.3 us");
  EXPECT_EQ(FormatSeconds(5e-12), "5.00 ps");
  EXPECT_EQ(FormatSeconds(3600), "3600 s");
  EXPECT_EQ(FormatSeconds(-1.5e-3), "-1.50 ms");
  EXPECT_EQ(FormatSeconds(0), "0 s");
}

}  // namespace
}  // namespace nbox
