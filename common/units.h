// Physical quantities written with units in scenario and topology files.
//
// Every parser accepts a number (integer, decimal or exponent form: "100", "2.5", "1e9",
// ".5") followed directly or after spaces by a unit, and throws nbox::UnitError whose message
// says what was expected with an example and quotes the text it got. Surrounding whitespace
// is ignored; anything else after the unit, a sign, "inf" or "nan" is rejected.
// Decimal prefixes are powers of ten (k or K, M, G, T, P); binary prefixes are powers of two
// (Ki, Mi, Gi, Ti, Pi) and exist only for bytes, so "25MB" is 25e6 bytes and "25MiB" is
// 26214400 bytes. Prefixes and units are case-sensitive ("m" would be milli, "b" is bits,
// "B" is bytes).
//
// The number and its decimal prefix are combined before rounding, so "1000ms" and "1s" give
// the same double, and "0.1us" is the double nearest to 1e-7.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nbox {

// A value that does not parse; what() names what was expected ("a rate such as 100Gbps").
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "100Gbps", "100Gb/s", "100 Gbit/s", "25Mbps", "1e9bps" -> bits per second. A unit is
// required; byte rates ("12.5GB/s") are rejected.
double ParseRateBps(std::string_view text);
// "25MB", "4KiB", "1500B", "1500" (plain number = bytes) -> bytes (must be whole: "1.5KiB"
// is 1536, "1.5B" is an error).
uint64_t ParseBytes(std::string_view text);
// "1us", "2.5ms", "10ns", "1s", "1ps" -> seconds ("µs" is accepted for "us"). A unit is
// required.
double ParseSeconds(std::string_view text);
// "125TFLOPS", "312e12FLOPS", "19.5TFLOP/s" -> floating-point operations per second. A unit
// is required.
double ParseFlopsRate(std::string_view text);
// "11.3GFLOP", "4e9", "342GFLOP" -> floating-point operations (a count, not a rate).
double ParseFlops(std::string_view text);
// "60.2M", "340M", "1.5B", "124000000" -> a count (K or k, M, B or G, T decimal multipliers;
// must be whole).
uint64_t ParseCount(std::string_view text);

// Human-readable forms used by reports, three significant digits: "100 Gb/s", "25.0 MiB",
// "1.25 ms", "512 B". Rates and durations use decimal prefixes, sizes binary ones. These are
// for people, not for reading back: they round.
std::string FormatRate(double bps);
std::string FormatBytes(double bytes);
std::string FormatSeconds(double seconds);

}  // namespace nbox
