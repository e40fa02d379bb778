// A counter-based pseudo-random source (SplitMix64): value i of stream s is a pure function of
// (s, i), so every rank can draw any sample of a global batch without sharing state.
#pragma once

#include <cstdint>

namespace nbox::train {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), from the top 24 bits (exact in float).
inline float UniformSigned(uint64_t stream, uint64_t index) {
  const uint64_t bits = SplitMix64(SplitMix64(stream) ^ index) >> 40;
  return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

}  // namespace nbox::train
