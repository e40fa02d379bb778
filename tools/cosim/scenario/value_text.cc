#include "tools/cosim/scenario/value_text.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "common/units.h"

namespace nbox::scenario {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}
namespace {

struct DecimalUnit {
  const char* suffix;
  int exp10;
};

// The first unit (largest first) in which `value` is at least 1 and whose shortest text
// parses back to exactly `value`; else the value in the unit of exponent 0, which always
// reads back exactly.
std::string ExactDecimalText(double value, const std::vector<DecimalUnit>& units,
                             double (*parse)(std::string_view)) {
  const char* base_suffix = "";
  for (const DecimalUnit& unit : units) {
    if (unit.exp10 == 0) base_suffix = unit.suffix;
    // Multiplying by an exact power of ten where possible keeps the quotient exact.
    const double scaled =
        unit.exp10 >= 0 ? value / std::pow(10.0, unit.exp10) : value * std::pow(10.0, -unit.exp10);
    if (scaled < 1) continue;
    const std::string text = fmt::format("{}{}", scaled, unit.suffix);
    try {
      if (parse(text) == value) return text;
    } catch (const UnitError&) {
      // Not exact in this unit; try the next.
    }
  }
  return fmt::format("{}{}", value, base_suffix);
}

struct WholeUnit {
  const char* suffix;
  uint64_t size;
};

// `value` / `unit` written with at most three decimals, or "" if that is not exact.
std::string ExactQuotient(uint64_t value, const WholeUnit& unit) {
  std::string text = std::to_string(value / unit.size);
  uint64_t remainder = value % unit.size;
  if (remainder != 0) text += '.';
  for (int decimals = 0; remainder != 0; ++decimals) {
    if (decimals == 3) return "";
    remainder *= 10;  // remainder < unit.size <= 2^50, no overflow
    text += static_cast<char>('0' + remainder / unit.size);
    remainder %= unit.size;
  }
  return text + unit.suffix;
}

// The shortest exact text among `units` (earlier wins a tie), plain digits below 10000.
std::string ShortestWholeText(uint64_t value, const std::vector<WholeUnit>& units) {
  std::string best = std::to_string(value);
  if (value < 10000) return best;
  for (const WholeUnit& unit : units) {
    if (value < unit.size) continue;
    const std::string text = ExactQuotient(value, unit);
    if (!text.empty() && text.size() < best.size()) best = text;
  }
  return best;
}

uint64_t Power(uint64_t base, int exponent) {
  uint64_t result = 1;
  for (int i = 0; i < exponent; ++i) result *= base;
  return result;
}

}  // namespace

std::string WholeNumberText(uint64_t value) {
  return std::to_string(value);
}

std::string BytesText(uint64_t bytes) {
  static const std::vector<WholeUnit> kUnits = {
      {"PiB", Power(2, 50)}, {"PB", Power(10, 15)}, {"TiB", Power(2, 40)}, {"TB", Power(10, 12)},
      {"GiB", Power(2, 30)}, {"GB", Power(10, 9)},  {"MiB", Power(2, 20)}, {"MB", Power(10, 6)},
      {"KiB", Power(2, 10)}, {"kB", Power(10, 3)}};
  return ShortestWholeText(bytes, kUnits);
}

std::string CountText(uint64_t count) {
  static const std::vector<WholeUnit> kUnits = {
      {"T", Power(10, 12)}, {"B", Power(10, 9)}, {"M", Power(10, 6)}, {"K", Power(10, 3)}};
  return ShortestWholeText(count, kUnits);
}

std::string RateText(double bps) {
  static const std::vector<DecimalUnit> kUnits = {
      {"Tbps", 12}, {"Gbps", 9}, {"Mbps", 6}, {"kbps", 3}, {"bps", 0}};
  return ExactDecimalText(bps, kUnits, ParseRateBps);
}

std::string DurationText(double seconds) {
  static const std::vector<DecimalUnit> kUnits = {
      {"s", 0}, {"ms", -3}, {"us", -6}, {"ns", -9}, {"ps", -12}};
  return ExactDecimalText(seconds, kUnits, ParseSeconds);
}

std::string FlopRateText(double flops) {
  static const std::vector<DecimalUnit> kUnits = {{"PFLOPS", 15}, {"TFLOPS", 12}, {"GFLOPS", 9},
                                                  {"MFLOPS", 6},  {"kFLOPS", 3},  {"FLOPS", 0}};
  return ExactDecimalText(flops, kUnits, ParseFlopsRate);
}

std::string FlopCountText(double flops) {
  static const std::vector<DecimalUnit> kUnits = {{"PFLOP", 15}, {"TFLOP", 12}, {"GFLOP", 9},
                                                  {"MFLOP", 6},  {"kFLOP", 3},  {"", 0}};
  return ExactDecimalText(flops, kUnits, ParseFlops);
}

std::string RealText(double value) {
  return fmt::format("{}", value);
}

}  // namespace nbox::scenario
