// The inputs of the emulated-peers tests, shared by the test double's plan and the real ranks
// (in the test process or emulated_peers_worker).
#pragma once

#include <cstddef>

namespace nbox::bridge::testing {

// Rank r's element i: integers well below 2^24, so float sums are exact.
inline float PlanInput(int rank, size_t i) {
  return static_cast<float>((rank + 1) * 1000 + static_cast<int>(i % 977));
}

}  // namespace nbox::bridge::testing
