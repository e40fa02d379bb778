// Parsing quantities with units: expected values are the closed forms of what was written.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "common/units.h"

namespace nbox {
namespace {

// The message of the UnitError thrown by `parse(text)`, or "" when it did not throw.
template <typename Parse>
std::string ErrorOf(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const UnitError& error) {
    return error.what();
  }
  return "";
}

TEST(ParseRateBps, AcceptsBitRatesWithDecimalPrefixes) {
  EXPECT_EQ(ParseRateBps("100Gbps"), 100e9);
  EXPECT_EQ(ParseRateBps("100Gb/s"), 100e9);
  EXPECT_EQ(ParseRateBps("100 Gbps"), 100e9);
  EXPECT_EQ(ParseRateBps("100 Gbit/s"), 100e9);
  EXPECT_EQ(ParseRateBps("  25Mbps\t"), 25e6);
  EXPECT_EQ(ParseRateBps("1e9bps"), 1e9);
  EXPECT_EQ(ParseRateBps("1.5kbps"), 1500.0);
  EXPECT_EQ(ParseRateBps("1.5Kbps"), 1500.0);
  EXPECT_EQ(ParseRateBps("0.4Tbps"), 400e9);
  EXPECT_EQ(ParseRateBps(".5Gbps"), 0.5e9);
  EXPECT_EQ(ParseRateBps("2.5E+1Gbps"), 25e9);
  EXPECT_EQ(ParseRateBps("0bps"), 0.0);
}

TEST(ParseRateBps, RejectsWithMessageSayingWhatWasExpected) {
  EXPECT_EQ(ErrorOf(ParseRateBps, "fast"), "expected a rate such as 100Gbps or 25Gb/s, got 'fast'");
  EXPECT_EQ(ErrorOf(ParseRateBps, ""), "expected a rate such as 100Gbps or 25Gb/s, got '' (empty)");
  EXPECT_EQ(ErrorOf(ParseRateBps, "100"),
            "expected a rate such as 100Gbps or 25Gb/s, got '100' (no unit)");
  EXPECT_EQ(ErrorOf(ParseRateBps, "100Gbps fast"),
            "expected a rate such as 100Gbps or 25Gb/s, got '100Gbps fast' "
            "(unknown unit 'Gbps fast')");
  EXPECT_EQ(ErrorOf(ParseRateBps, "-1Gbps"),
            "expected a rate such as 100Gbps or 25Gb/s, got '-1Gbps' (negative)");
  EXPECT_EQ(ErrorOf(ParseRateBps, "12.5GB/s"),
            "expected a rate such as 100Gbps or 25Gb/s, got '12.5GB/s' "
            "(a byte rate; rates are in bits per second)");
  // "m" is milli, not mega: not a prefix for rates.
  EXPECT_EQ(ErrorOf(ParseRateBps, "100mbps"),
            "expected a rate such as 100Gbps or 25Gb/s, got '100mbps' (unknown unit 'mbps')");
  EXPECT_EQ(ErrorOf(ParseRateBps, "1e400bps"),
            "expected a rate such as 100Gbps or 25Gb/s, got '1e400bps' (too large)");
  EXPECT_EQ(ErrorOf(ParseRateBps, "1eGbps"),
            "expected a rate such as 100Gbps or 25Gb/s, got '1eGbps' (incomplete exponent)");
  EXPECT_NE(ErrorOf(ParseRateBps, "inf"), "");
  EXPECT_NE(ErrorOf(ParseRateBps, "nanbps"), "");
  EXPECT_NE(ErrorOf(ParseRateBps, "+5Gbps"), "");
  EXPECT_NE(ErrorOf(ParseRateBps, "1..5Gbps"), "");
  EXPECT_NE(ErrorOf(ParseRateBps, "1KiBps"), "");
}

TEST(ParseBytes, DecimalAndBinaryPrefixes) {
  EXPECT_EQ(ParseBytes("25MB"), 25000000u);
  EXPECT_EQ(ParseBytes("25MiB"), 26214400u);
  EXPECT_EQ(ParseBytes("4KiB"), 4096u);
  EXPECT_EQ(ParseBytes("4kB"), 4000u);
  EXPECT_EQ(ParseBytes("4KB"), 4000u);
  EXPECT_EQ(ParseBytes("1500B"), 1500u);
  EXPECT_EQ(ParseBytes("1500"), 1500u);
  EXPECT_EQ(ParseBytes("1500 B"), 1500u);
  EXPECT_EQ(ParseBytes("1TB"), 1000000000000u);
  EXPECT_EQ(ParseBytes("1GiB"), 1073741824u);
  EXPECT_EQ(ParseBytes("16PiB"), uint64_t{1} << 54);
  EXPECT_EQ(ParseBytes("0"), 0u);
}

TEST(ParseBytes, FractionsThatComeOutWholeAreExact) {
  EXPECT_EQ(ParseBytes("1.5KiB"), 1536u);
  EXPECT_EQ(ParseBytes("0.5KiB"), 512u);
  EXPECT_EQ(ParseBytes("2.5kB"), 2500u);
  EXPECT_EQ(ParseBytes("0.001kB"), 1u);
  EXPECT_EQ(ParseBytes("1e3"), 1000u);
  EXPECT_EQ(ParseBytes("1.25e6"), 1250000u);
  EXPECT_EQ(ParseBytes("0.0009765625KiB"), 1u);  // 2^-10 KiB
  EXPECT_EQ(ParseBytes("18446744073709551615"), std::numeric_limits<uint64_t>::max());
}

TEST(ParseBytes, RejectsPartsOfBytesOverflowAndGarbage) {
  EXPECT_EQ(ErrorOf(ParseBytes, "1.5B"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '1.5B' "
            "(not a whole number)");
  EXPECT_EQ(ErrorOf(ParseBytes, "0.0001kB"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '0.0001kB' "
            "(not a whole number)");
  EXPECT_EQ(ErrorOf(ParseBytes, "0.1KiB"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '0.1KiB' "
            "(not a whole number)");
  EXPECT_EQ(ErrorOf(ParseBytes, "18446744073709551616"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, "
            "got '18446744073709551616' (too large)");
  EXPECT_EQ(ErrorOf(ParseBytes, "20EB"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '20EB' "
            "(incomplete exponent)");
  EXPECT_EQ(ErrorOf(ParseBytes, "4Ki"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '4Ki' "
            "(unknown unit 'Ki')");
  EXPECT_EQ(ErrorOf(ParseBytes, "-5MB"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got '-5MB' (negative)");
  EXPECT_EQ(ErrorOf(ParseBytes, "lots"),
            "expected a whole number of bytes such as 1500, 25MB or 4KiB, got 'lots'");
  EXPECT_NE(ErrorOf(ParseBytes, "4 MB MB"), "");
  EXPECT_NE(ErrorOf(ParseBytes, "4mB"), "");
  EXPECT_NE(ErrorOf(ParseBytes, "1e30"), "");
}

TEST(ParseSeconds, EveryUnit) {
  EXPECT_EQ(ParseSeconds("1s"), 1.0);
  EXPECT_EQ(ParseSeconds("2.5ms"), 0.0025);
  EXPECT_EQ(ParseSeconds("1us"), 1e-6);
  EXPECT_EQ(ParseSeconds("1\xC2\xB5s"), 1e-6);
  EXPECT_EQ(ParseSeconds("10ns"), 1e-8);
  EXPECT_EQ(ParseSeconds("1ps"), 1e-12);
  EXPECT_EQ(ParseSeconds("0s"), 0.0);
  EXPECT_EQ(ParseSeconds("500 us"), 5e-4);
}

TEST(ParseSeconds, PrefixAndNumberAreRoundedOnce) {
  EXPECT_EQ(ParseSeconds("1000ms"), 1.0);
  EXPECT_EQ(ParseSeconds("0.1us"), 1e-7);
  EXPECT_EQ(ParseSeconds("100ns"), ParseSeconds("0.1us"));
  EXPECT_EQ(ParseSeconds("3e3ms"), 3.0);
}

TEST(ParseSeconds, RejectsMissingOrUnknownUnits) {
  EXPECT_EQ(ErrorOf(ParseSeconds, "5"),
            "expected a duration such as 1us, 2.5ms or 10ns, got '5' (no unit)");
  EXPECT_EQ(ErrorOf(ParseSeconds, "5min"),
            "expected a duration such as 1us, 2.5ms or 10ns, got '5min' (unknown unit 'min')");
  EXPECT_EQ(ErrorOf(ParseSeconds, "-1ms"),
            "expected a duration such as 1us, 2.5ms or 10ns, got '-1ms' (negative)");
  EXPECT_EQ(ErrorOf(ParseSeconds, "1e-400s"),
            "expected a duration such as 1us, 2.5ms or 10ns, got '1e-400s' (too small)");
  EXPECT_NE(ErrorOf(ParseSeconds, "1Ms"), "");
  EXPECT_NE(ErrorOf(ParseSeconds, "soon"), "");
}

TEST(ParseFlopsRate, Units) {
  EXPECT_EQ(ParseFlopsRate("125TFLOPS"), 125e12);
  EXPECT_EQ(ParseFlopsRate("312e12FLOPS"), 312e12);
  EXPECT_EQ(ParseFlopsRate("19.5TFLOPS"), 19.5e12);
  EXPECT_EQ(ParseFlopsRate("19.5 TFLOP/s"), 19.5e12);
  EXPECT_EQ(ParseFlopsRate("1.979PFLOPS"), 1.979e15);
  EXPECT_EQ(ErrorOf(ParseFlopsRate, "125"),
            "expected a FLOP rate such as 125TFLOPS or 312e12FLOPS, got '125' (no unit)");
  EXPECT_EQ(ErrorOf(ParseFlopsRate, "125TFLOP"),
            "expected a FLOP rate such as 125TFLOPS or 312e12FLOPS, got '125TFLOP' "
            "(unknown unit 'TFLOP')");
}

TEST(ParseFlops, CountOfOperations) {
  EXPECT_EQ(ParseFlops("11.3GFLOP"), 11.3e9);
  EXPECT_EQ(ParseFlops("4e9"), 4e9);
  EXPECT_EQ(ParseFlops("342GFLOP"), 342e9);
  EXPECT_EQ(ParseFlops("0"), 0.0);
  EXPECT_EQ(ErrorOf(ParseFlops, "1TFLOPS"),
            "expected a number of floating-point operations such as 11.3GFLOP or 4e9, "
            "got '1TFLOPS' (unknown unit 'TFLOPS')");
}

TEST(ParseCount, DecimalMultipliers) {
  EXPECT_EQ(ParseCount("60.2M"), 60200000u);
  EXPECT_EQ(ParseCount("340M"), 340000000u);
  EXPECT_EQ(ParseCount("1.5B"), 1500000000u);
  EXPECT_EQ(ParseCount("1.5G"), 1500000000u);
  EXPECT_EQ(ParseCount("124000000"), 124000000u);
  EXPECT_EQ(ParseCount("7K"), 7000u);
  EXPECT_EQ(ParseCount("7k"), 7000u);
  EXPECT_EQ(ParseCount("2T"), 2000000000000u);
  EXPECT_EQ(ErrorOf(ParseCount, "1.5"),
            "expected a count such as 60.2M, 1.5B or 124000000, got '1.5' (not a whole number)");
  EXPECT_EQ(ErrorOf(ParseCount, "3 apples"),
            "expected a count such as 60.2M, 1.5B or 124000000, got '3 apples' "
            "(unknown unit 'apples')");
  EXPECT_NE(ErrorOf(ParseCount, "5Mi"), "");
}

}  // namespace
}  // namespace nbox
