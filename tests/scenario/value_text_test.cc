// Exact value texts: the largest unit that keeps the text short and reads back exactly.
#include "tools/cosim/scenario/value_text.h"

#include <gtest/gtest.h>

#include "common/units.h"

namespace nbox::scenario {
namespace {

TEST(ValueText, Bytes) {
  EXPECT_EQ(BytesText(0), "0");
  EXPECT_EQ(BytesText(1500), "1500");
  EXPECT_EQ(BytesText(9216), "9216");  // plain below 10000 even when 9KiB
  EXPECT_EQ(BytesText(4000000), "4MB");
  EXPECT_EQ(BytesText(26214400), "25MiB");
  EXPECT_EQ(BytesText(1572864), "1.5MiB");
  EXPECT_EQ(BytesText(100000), "100kB");
  EXPECT_EQ(BytesText(12345), "12345");
  EXPECT_EQ(BytesText(1073741824), "1GiB");
}

TEST(ValueText, Counts) {
  EXPECT_EQ(CountText(60200000), "60.2M");
  EXPECT_EQ(CountText(1500000000), "1.5B");
  EXPECT_EQ(CountText(124439808), "124439808");
  EXPECT_EQ(CountText(48), "48");
}

TEST(ValueText, RatesDurationsAndFlops) {
  EXPECT_EQ(RateText(100e9), "100Gbps");
  EXPECT_EQ(RateText(1.5e6), "1.5Mbps");
  EXPECT_EQ(RateText(10e12), "10Tbps");
  EXPECT_EQ(RateText(0), "0bps");
  EXPECT_EQ(DurationText(1e-6), "1us");
  EXPECT_EQ(DurationText(0.0025), "2.5ms");
  EXPECT_EQ(DurationText(3600), "3600s");
  EXPECT_EQ(DurationText(0), "0s");
  EXPECT_EQ(FlopRateText(125e12), "125TFLOPS");
  EXPECT_EQ(FlopCountText(11.3e9), "11.3GFLOP");
  EXPECT_EQ(FlopCountText(0), "0");
  EXPECT_EQ(RealText(0.4), "0.4");
  EXPECT_EQ(RealText(2), "2");
}

TEST(ValueText, AwkwardValuesStillReadBackExactly) {
  for (double bps : {400e9 / 6, 1e9 / 3, 123456789.123, 1e-3}) {
    EXPECT_EQ(ParseRateBps(RateText(bps)), bps) << RateText(bps);
  }
  for (double seconds : {1.0 / 3, 7e-13, 1e-15, 2.5e-7}) {
    EXPECT_EQ(ParseSeconds(DurationText(seconds)), seconds) << DurationText(seconds);
  }
  for (uint64_t bytes : {uint64_t{1234567}, uint64_t{1} << 40, uint64_t{18446744073709551615u}}) {
    EXPECT_EQ(ParseBytes(BytesText(bytes)), bytes) << BytesText(bytes);
  }
}

}  // namespace
}  // namespace nbox::scenario
