// Ring all-reduce on a non-blocking star against the alpha-beta closed form of
// tests/cosim/alpha_beta.h.
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"

namespace nbox::testing {
namespace {

struct Case {
  int world;
  uint64_t bytes;
  uint32_t mtu;
  double latency_s;
};

std::string Describe(const Case& c) {
  return "W" + std::to_string(c.world) + "_" + std::to_string(c.bytes >> 10) + "KiB_MTU" +
         std::to_string(c.mtu) + "_" + std::to_string(static_cast<int>(c.latency_s * 1e6)) + "us";
}

// Readable names in test listings (ctest shows both).
void PrintTo(const Case& c, std::ostream* os) {
  *os << Describe(c);
}
std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return Describe(info.param);
}

class RingAlphaBeta : public ::testing::TestWithParam<Case> {};

TEST_P(RingAlphaBeta, SteadyIterationWithinFivePercent) {
  const Case c = GetParam();
  StarJob setup;
  setup.world = c.world;
  setup.latency_s = c.latency_s;
  setup.network.mtu = c.mtu;
  // Iteration 0 opens the TCP windows; iteration 1 is the steady state the formula describes.
  const auto outcome = RunOnStar(setup, AllReduceProgram(c.bytes, 2));
  ASSERT_TRUE(outcome.finished);
  ASSERT_EQ(outcome.summary.iterations.size(), 2u);
  const double measured = outcome.summary.iterations[1].time_s;
  const double expected =
      AlphaBetaSeconds(c.world, static_cast<double>(c.bytes), setup.rate_bps, c.latency_s, c.mtu);
  std::printf("W=%d S=%llu MTU=%u: simulated %.6f s, alpha-beta %.6f s, ratio %.4f\n", c.world,
              static_cast<unsigned long long>(c.bytes), c.mtu, measured, expected,
              measured / expected);
  EXPECT_NEAR(measured / expected, 1.0, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Star, RingAlphaBeta,
                         ::testing::Values(Case{4, 16 << 20, 9000, 1e-6},
                                           Case{8, 32 << 20, 9000, 1e-6},
                                           Case{4, 4 << 20, 1500, 1e-6},
                                           // Latency-heavy: 20 us links, 256 KiB.
                                           Case{8, 256 << 10, 9000, 20e-6}),
                         CaseName);

}  // namespace
}  // namespace nbox::testing
