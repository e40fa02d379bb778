// Physical quantities written with units in scenario and topology files.
//
// Every parser accepts a number (integer, decimal or exponent form) followed directly or
// after spaces by a unit, and throws nbox::UnitError whose message says what was expected.
// Decimal prefixes are powers of ten (k, M, G, T); binary prefixes are powers of two
// (Ki, Mi, Gi, Ti), so "25MB" is 25e6 bytes and "25MiB" is 26214400 bytes.
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

// "100Gbps", "100Gb/s", "25Mbps", "1e9bps" -> bits per second.
double ParseRateBps(std::string_view text);
// "25MB", "4KiB", "1500B", "1500" (plain number = bytes) -> bytes (must be whole).
uint64_t ParseBytes(std::string_view text);
// "1us", "2.5ms", "10ns", "1s", "1ps" -> seconds.
double ParseSeconds(std::string_view text);
// "125TFLOPS", "312e12FLOPS", "19.5TFLOPS" -> floating-point operations per second.
double ParseFlopsRate(std::string_view text);
// "11.3GFLOP", "4e9", "342GFLOP" -> floating-point operations (a count, not a rate).
double ParseFlops(std::string_view text);
// "60.2M", "340M", "1.5B", "124000000" -> a count (K, M, B/G, T decimal multipliers).
uint64_t ParseCount(std::string_view text);

// Human-readable forms used by reports: "100 Gb/s", "25.0 MiB", "1.25 ms".
std::string FormatRate(double bps);
std::string FormatBytes(double bytes);
std::string FormatSeconds(double seconds);

}  // namespace nbox
