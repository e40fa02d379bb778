// Halving-doubling all-reduce on a non-blocking star against its alpha-beta closed form
// (tests/cosim/alpha_beta.h): the ring's bandwidth term with 2 log2 W latency steps instead of
// 2(W - 1), and the fold's extra buffer and steps when W is not a power of two; and, where
// latency dominates, faster than the ring by about the ratio of their step counts.
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
  double latency_s;
};

std::string Describe(const Case& c) {
  return "W" + std::to_string(c.world) + "_" + std::to_string(c.bytes >> 10) + "KiB_" +
         std::to_string(static_cast<int>(c.latency_s * 1e6)) + "us";
}
void PrintTo(const Case& c, std::ostream* os) {
  *os << Describe(c);
}
std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return Describe(info.param);
}

constexpr uint32_t kMtu = 9000;

double SteadySeconds(const Case& c, const std::string& algorithm) {
  StarJob setup;
  setup.world = c.world;
  setup.latency_s = c.latency_s;
  setup.network.mtu = kMtu;
  setup.all_reduce_algorithm = algorithm;
  return SteadyAllReduceSeconds(setup, c.bytes);
}

class HalvingDoublingAlphaBeta : public ::testing::TestWithParam<Case> {};

TEST_P(HalvingDoublingAlphaBeta, SteadyIterationWithinFivePercent) {
  const Case c = GetParam();
  const double measured = SteadySeconds(c, "HalvingDoubling");
  const double expected = HalvingDoublingAlphaBetaSeconds(c.world, static_cast<double>(c.bytes),
                                                          StarJob{}.rate_bps, c.latency_s, kMtu);
  std::printf("%s: simulated %.6f s, alpha-beta %.6f s, ratio %.4f\n", Describe(c).c_str(),
              measured, expected, measured / expected);
  EXPECT_NEAR(measured / expected, 1.0, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Star, HalvingDoublingAlphaBeta,
                         ::testing::Values(Case{4, 16 << 20, 1e-6}, Case{8, 32 << 20, 1e-6},
                                           // Latency-heavy: 20 us links, 64 KiB.
                                           Case{16, 64 << 10, 20e-6}),
                         CaseName);

// W = 6 folds ranks 0 and 2 into 1 and 3. The closed form runs the fold, the rounds and the
// answer one after another; the schedule starts every message as soon as its data is there, so
// ranks 4 and 5 send their first round into hosts still receiving the fold and share their
// links with it: the time lies between the closed form and the closed form plus half a
// buffer's transfer (measured: 6% above the closed form, a quarter of a buffer).
TEST(HalvingDoublingAlphaBetaFolded, BetweenTheClosedFormAndItPlusTheFirstRoundsContention) {
  const Case c{6, 12 << 20, 1e-6};
  const double measured = SteadySeconds(c, "HalvingDoubling");
  const double rate = StarJob{}.rate_bps;
  const double expected = HalvingDoublingAlphaBetaSeconds(c.world, static_cast<double>(c.bytes),
                                                          rate, c.latency_s, kMtu);
  const double contention = 0.5 * static_cast<double>(c.bytes) / GoodputBytesPerSecond(rate, kMtu);
  std::printf("W=6: simulated %.6f s, alpha-beta %.6f s, + contention %.6f s\n", measured, expected,
              contention);
  EXPECT_GE(measured, 0.99 * expected);
  EXPECT_LE(measured, expected + contention);
}

// 16 ranks, 64 KiB, 20 us links: each step costs about 42 us and moves 4 KiB (ring) or at most
// 32 KiB (halving-doubling) at 100 Gb/s, so latency dominates and the 30 steps of the ring
// against halving-doubling's 8 decide: the closed forms predict a ratio of about 3.5.
TEST(HalvingDoublingAgainstRing, FewerStepsWinWhereLatencyDominates) {
  const Case c{16, 64 << 10, 20e-6};
  const double ring = SteadySeconds(c, "Ring");
  const double halving_doubling = SteadySeconds(c, "HalvingDoubling");
  const double predicted = AlphaBetaSeconds(c.world, static_cast<double>(c.bytes),
                                            StarJob{}.rate_bps, c.latency_s, kMtu) /
                           HalvingDoublingAlphaBetaSeconds(c.world, static_cast<double>(c.bytes),
                                                           StarJob{}.rate_bps, c.latency_s, kMtu);
  std::printf("ring %.6f s, halving-doubling %.6f s: %.2fx (predicted %.2fx)\n", ring,
              halving_doubling, ring / halving_doubling, predicted);
  EXPECT_NEAR(ring / halving_doubling / predicted, 1.0, 0.1);
}

}  // namespace
}  // namespace nbox::testing
