#include "common/units.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "common/shortened.h"

namespace nbox {
namespace {

// One way of writing a unit: its text and the power of ten and of two it stands for.
struct UnitSpelling {
  std::string text;
  int exp10 = 0;
  int exp2 = 0;
};

// A number as written: value = digits * 10^exponent, digits without leading or trailing zeros
// ("" for zero). Keeping the digits lets prefixes be applied exactly.
struct Decimal {
  std::string digits;
  int exponent = 0;
};

struct Quantity {
  Decimal number;
  std::string_view unit;  // what follows the number, spaces skipped; may be empty
};

struct Prefix {
  const char* text;
  int exp10;
  int exp2;
};

constexpr Prefix kDecimalPrefixes[] = {{"", 0, 0},  {"k", 3, 0},  {"K", 3, 0}, {"M", 6, 0},
                                       {"G", 9, 0}, {"T", 12, 0}, {"P", 15, 0}};
constexpr Prefix kBinaryPrefixes[] = {
    {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}};

constexpr std::string_view kRateExpected = "a rate such as 100Gbps or 25Gb/s";
constexpr std::string_view kBytesExpected = "a whole number of bytes such as 1500, 25MB or 4KiB";
constexpr std::string_view kSecondsExpected = "a duration such as 1us, 2.5ms or 10ns";
constexpr std::string_view kFlopsRateExpected = "a FLOP rate such as 125TFLOPS or 312e12FLOPS";
constexpr std::string_view kFlopsExpected =
    "a number of floating-point operations such as 11.3GFLOP or 4e9";
constexpr std::string_view kCountExpected = "a count such as 60.2M, 1.5B or 124000000";

[[noreturn]] void Fail(std::string_view expected, std::string_view text,
                       std::string_view why = {}) {
  std::string message = fmt::format("expected {}, got '{}'", expected, Shortened(text));
  if (!why.empty()) message += fmt::format(" ({})", why);
  throw UnitError(message);
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

// Splits "2.5 ms" into the number 25e-1 and the unit "ms". Throws on anything that does not
// start with an unsigned decimal number.
Quantity SplitQuantity(std::string_view text, std::string_view expected) {
  const std::string_view t = Trim(text);
  if (t.empty()) Fail(expected, text, "empty");
  if (t.front() == '-') Fail(expected, text, "negative");
  size_t i = 0;
  std::string digits;
  int fraction_digits = 0;
  while (i < t.size() && IsDigit(t[i])) digits += t[i++];
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && IsDigit(t[i])) {
      digits += t[i++];
      ++fraction_digits;
    }
  }
  if (digits.empty()) Fail(expected, text);
  long exponent = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    size_t j = i + 1;
    bool negative = false;
    if (j < t.size() && (t[j] == '+' || t[j] == '-')) negative = t[j++] == '-';
    if (j >= t.size() || !IsDigit(t[j])) Fail(expected, text, "incomplete exponent");
    while (j < t.size() && IsDigit(t[j])) {
      exponent = exponent * 10 + (t[j++] - '0');
      if (exponent > 9999) Fail(expected, text, "exponent out of range");
    }
    if (negative) exponent = -exponent;
    i = j;
  }
  while (i < t.size() && IsSpace(t[i])) ++i;

  Quantity quantity;
  quantity.unit = t.substr(i);
  const size_t first = digits.find_first_not_of('0');
  if (first != std::string::npos) {
    const size_t last = digits.find_last_not_of('0');
    const int trailing_zeros = static_cast<int>(digits.size() - 1 - last);
    quantity.number.digits = digits.substr(first, last + 1 - first);
    quantity.number.exponent = static_cast<int>(exponent) - fraction_digits + trailing_zeros;
  }
  return quantity;
}

const UnitSpelling* FindUnit(const std::vector<UnitSpelling>& units, std::string_view unit) {
  for (const UnitSpelling& spelling : units) {
    if (spelling.text == unit) return &spelling;
  }
  return nullptr;
}

// Every prefix in `prefixes` combined with every base spelling.
template <size_t N>
void AddPrefixed(std::vector<UnitSpelling>& units, const Prefix (&prefixes)[N],
                 std::initializer_list<const char*> bases, int base_exp10 = 0) {
  for (const Prefix& prefix : prefixes) {
    for (const char* base : bases) {
      units.push_back({std::string(prefix.text) + base, prefix.exp10 + base_exp10, prefix.exp2});
    }
  }
}

// The number with the unit applied. Throws when the unit is unknown, or missing and not
// optional (`units` lists "" when a plain number is allowed).
const UnitSpelling& ResolveUnit(const Quantity& quantity, const std::vector<UnitSpelling>& units,
                                std::string_view text, std::string_view expected) {
  const UnitSpelling* spelling = FindUnit(units, quantity.unit);
  if (spelling == nullptr) {
    if (quantity.unit.empty()) Fail(expected, text, "no unit");
    Fail(expected, text, fmt::format("unknown unit '{}'", quantity.unit));
  }
  return *spelling;
}

double ToDouble(const Quantity& quantity, const UnitSpelling& unit, std::string_view text,
                std::string_view expected) {
  if (quantity.number.digits.empty()) return 0.0;
  // Rounding once, from the exact decimal, keeps "1000ms" == "1s".
  const long exponent = static_cast<long>(quantity.number.exponent) + unit.exp10;
  const std::string exact = fmt::format("{}e{}", quantity.number.digits, exponent);
  errno = 0;
  double value = std::strtod(exact.c_str(), nullptr);
  if (std::isinf(value)) Fail(expected, text, "too large");
  if (value == 0.0 || (errno == ERANGE && value < std::numeric_limits<double>::min())) {
    Fail(expected, text, "too small");
  }
  value = std::ldexp(value, unit.exp2);
  if (std::isinf(value)) Fail(expected, text, "too large");
  return value;
}

// The exact whole value digits * 10^exponent * 2^exp2, or an error when it is not whole or
// does not fit in 64 bits.
uint64_t ToWhole(const Quantity& quantity, const UnitSpelling& unit, std::string_view text,
                 std::string_view expected) {
  using Wide = unsigned __int128;
  const std::string& digits = quantity.number.digits;
  if (digits.empty()) return 0;
  constexpr Wide kMax = std::numeric_limits<uint64_t>::max();
  if (digits.size() > 20) Fail(expected, text, "too many digits");
  Wide value = 0;
  for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
  int exp10 = quantity.number.exponent + unit.exp10;
  int exp2 = unit.exp2;
  if (exp10 < 0) {
    // 10^-k = 2^-k * 5^-k: the fives must divide the digits, the twos may come from exp2.
    const int k = -exp10;
    if (k > 27) Fail(expected, text, "not a whole number");
    Wide five_power = 1;
    for (int i = 0; i < k; ++i) five_power *= 5;
    if (value % five_power != 0) Fail(expected, text, "not a whole number");
    value /= five_power;
    exp2 -= k;
    exp10 = 0;
  }
  if (exp2 < 0) {
    const Wide mask = (Wide{1} << -exp2) - 1;  // -exp2 <= 27 here
    if ((value & mask) != 0) Fail(expected, text, "not a whole number");
    value >>= -exp2;
    exp2 = 0;
  }
  for (int i = 0; i < exp10; ++i) {
    value *= 10;
    if (value > kMax) Fail(expected, text, "too large");
  }
  for (int i = 0; i < exp2; ++i) {
    value *= 2;
    if (value > kMax) Fail(expected, text, "too large");
  }
  if (value > kMax) Fail(expected, text, "too large");
  return static_cast<uint64_t>(value);
}

const std::vector<UnitSpelling>& RateUnits() {
  static const std::vector<UnitSpelling> units = [] {
    std::vector<UnitSpelling> u;
    AddPrefixed(u, kDecimalPrefixes, {"bps", "b/s", "bit/s"});
    return u;
  }();
  return units;
}

const std::vector<UnitSpelling>& ByteUnits() {
  static const std::vector<UnitSpelling> units = [] {
    std::vector<UnitSpelling> u = {{"", 0, 0}};
    AddPrefixed(u, kDecimalPrefixes, {"B"});
    AddPrefixed(u, kBinaryPrefixes, {"B"});
    return u;
  }();
  return units;
}

const std::vector<UnitSpelling>& SecondUnits() {
  static const std::vector<UnitSpelling> units = {{"s", 0, 0},   {"ms", -3, 0},
                                                  {"us", -6, 0}, {"\xC2\xB5s", -6, 0},
                                                  {"ns", -9, 0}, {"ps", -12, 0}};
  return units;
}

const std::vector<UnitSpelling>& FlopsRateUnits() {
  static const std::vector<UnitSpelling> units = [] {
    std::vector<UnitSpelling> u;
    AddPrefixed(u, kDecimalPrefixes, {"FLOPS", "FLOP/s"});
    return u;
  }();
  return units;
}

const std::vector<UnitSpelling>& FlopsUnits() {
  static const std::vector<UnitSpelling> units = [] {
    std::vector<UnitSpelling> u = {{"", 0, 0}};
    AddPrefixed(u, kDecimalPrefixes, {"FLOP"});
    return u;
  }();
  return units;
}

const std::vector<UnitSpelling>& CountUnits() {
  static const std::vector<UnitSpelling> units = {
      {"", 0, 0}, {"k", 3, 0}, {"K", 3, 0}, {"M", 6, 0}, {"B", 9, 0}, {"G", 9, 0}, {"T", 12, 0}};
  return units;
}

double ParseReal(std::string_view text, const std::vector<UnitSpelling>& units,
                 std::string_view expected) {
  const Quantity quantity = SplitQuantity(text, expected);
  return ToDouble(quantity, ResolveUnit(quantity, units, text, expected), text, expected);
}

uint64_t ParseWhole(std::string_view text, const std::vector<UnitSpelling>& units,
                    std::string_view expected) {
  const Quantity quantity = SplitQuantity(text, expected);
  return ToWhole(quantity, ResolveUnit(quantity, units, text, expected), text, expected);
}

// A unit step of a human-readable scale: values >= factor are shown in this unit.
struct Scale {
  double factor;
  const char* symbol;
};

// `value` (>= 0) to three significant digits: "1.25", "25.0", "250"; "1000" when rounding
// carries; "0.977" below one.
std::string ThreeSignificantDigits(double value) {
  std::string text = fmt::format("{:.3g}", value);
  if (std::strtod(text.c_str(), nullptr) < 1) return text;
  text = fmt::format("{:.2f}", value);
  if (std::strtod(text.c_str(), nullptr) < 10) return text;
  text = fmt::format("{:.1f}", value);
  if (std::strtod(text.c_str(), nullptr) < 100) return text;
  return fmt::format("{:.0f}", value);
}

// `value` in the largest unit of `scales` (ascending) it reaches, to three significant
// digits; zero and non-finite values use scales[base].
template <size_t N>
std::string FormatScaled(double value, const Scale (&scales)[N], size_t base,
                         bool whole_in_smallest) {
  if (value == 0) return fmt::format("0 {}", scales[base].symbol);
  if (!std::isfinite(value)) return fmt::format("{} {}", value, scales[base].symbol);
  const char* sign = value < 0 ? "-" : "";
  const double magnitude = std::fabs(value);
  size_t index = 0;
  while (index + 1 < N && magnitude >= scales[index + 1].factor) ++index;
  for (;;) {
    const double scaled = magnitude / scales[index].factor;
    if (index == 0 && whole_in_smallest && scaled == std::floor(scaled) && scaled < 1000) {
      return fmt::format("{}{:.0f} {}", sign, scaled, scales[index].symbol);
    }
    const std::string digits = ThreeSignificantDigits(scaled);
    // Rounding may carry to 1000: show it in the next unit when there is one.
    if (std::strtod(digits.c_str(), nullptr) >= 1000 && index + 1 < N) {
      ++index;
      continue;
    }
    return fmt::format("{}{} {}", sign, digits, scales[index].symbol);
  }
}

}  // namespace

double ParseRateBps(std::string_view text) {
  const Quantity quantity = SplitQuantity(text, kRateExpected);
  const std::string_view unit = quantity.unit;
  const bool bytes = unit.size() >= 3 && (unit.substr(unit.size() - 3) == "B/s" ||
                                          unit.substr(unit.size() - 3) == "Bps");
  if (bytes) Fail(kRateExpected, text, "a byte rate; rates are in bits per second");
  return ToDouble(quantity, ResolveUnit(quantity, RateUnits(), text, kRateExpected), text,
                  kRateExpected);
}

uint64_t ParseBytes(std::string_view text) {
  return ParseWhole(text, ByteUnits(), kBytesExpected);
}

double ParseSeconds(std::string_view text) {
  return ParseReal(text, SecondUnits(), kSecondsExpected);
}

double ParseFlopsRate(std::string_view text) {
  return ParseReal(text, FlopsRateUnits(), kFlopsRateExpected);
}

double ParseFlops(std::string_view text) {
  return ParseReal(text, FlopsUnits(), kFlopsExpected);
}

uint64_t ParseCount(std::string_view text) {
  return ParseWhole(text, CountUnits(), kCountExpected);
}

std::string FormatRate(double bps) {
  static constexpr Scale kScales[] = {{1, "b/s"},    {1e3, "kb/s"},  {1e6, "Mb/s"},
                                      {1e9, "Gb/s"}, {1e12, "Tb/s"}, {1e15, "Pb/s"}};
  return FormatScaled(bps, kScales, 0, false);
}

std::string FormatBytes(double bytes) {
  static constexpr Scale kScales[] = {{1, "B"},
                                      {1024.0, "KiB"},
                                      {1024.0 * 1024, "MiB"},
                                      {1024.0 * 1024 * 1024, "GiB"},
                                      {1024.0 * 1024 * 1024 * 1024, "TiB"},
                                      {1024.0 * 1024 * 1024 * 1024 * 1024, "PiB"}};
  return FormatScaled(bytes, kScales, 0, true);
}

std::string FormatSeconds(double seconds) {
  static constexpr Scale kScales[] = {
      {1e-12, "ps"}, {1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
  return FormatScaled(seconds, kScales, 4, false);
}

}  // namespace nbox
