// Message contents for the plugin transfer tests: byte i of message `seed` is a cheap hash of
// both, so a shifted, truncated or swapped copy cannot match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nbox::bridge::testing {

inline uint8_t PatternByte(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x * 0x94d049bb133111ebull >> 56);
}

inline std::vector<uint8_t> Pattern(uint64_t seed, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = PatternByte(seed, i);
  return bytes;
}

// The first index where `got` differs from the pattern, or -1.
inline long FirstMismatch(const uint8_t* got, uint64_t seed, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (got[i] != PatternByte(seed, i)) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace nbox::bridge::testing
