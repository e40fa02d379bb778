// NCCL's double binary tree all-reduce on a non-blocking star against a closed form derived by
// hand for 8 ranks: with 2 channels (one per tree) every rank is an inner node of one tree and
// a leaf of the other, so its link carries 3 + 1 chunk messages per pair of chunks each way:
// 2 S in all, in n = 32 chunk periods (S / 2 a channel, 256 KiB chunks). The chunks pipeline
// up and down 3 levels (tree.h: both trees have depth 3 at W = 8), each hop taking a period
// (the link is shared by its four connections), so the last chunk ends 2 x 3 - 1 periods after
// the busiest link's 2 S:
//   T = 2 S / B x (1 + 5 / n) + 6 L
// with B the goodput and L the per-hop latency of tests/cosim/alpha_beta.h. And where latency
// dominates (16 ranks, 64 KiB, 20 us links), the tree's 2 x 4 hops beat the ring's 30.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"

namespace nbox::testing {
namespace {

constexpr uint32_t kMtu = 9000;

double SteadySeconds(int world, uint64_t bytes, double latency_s, uint64_t chunk,
                     const std::string& algorithm) {
  StarJob setup;
  setup.world = world;
  setup.latency_s = latency_s;
  setup.network.mtu = kMtu;
  setup.channels = 2;
  setup.chunk_bytes = chunk;
  setup.all_reduce_algorithm = algorithm;
  return SteadyAllReduceSeconds(setup, bytes);
}

TEST(TreeAlphaBeta, EightRanksPipelinedWithinFivePercent) {
  const uint64_t bytes = 16 << 20;
  const uint64_t chunk = 256 << 10;
  const double latency = 1e-6;
  const double rate = StarJob{}.rate_bps;
  const double measured = SteadySeconds(8, bytes, latency, chunk, "Tree");
  const double periods = static_cast<double>(bytes / 2 / chunk);
  const double expected = 2.0 * bytes / GoodputBytesPerSecond(rate, kMtu) * (1 + 5 / periods) +
                          6 * StepLatencySeconds(rate, latency, kMtu);
  std::printf("W=8 tree: simulated %.6f s, closed form %.6f s, ratio %.4f\n", measured, expected,
              measured / expected);
  EXPECT_NEAR(measured / expected, 1.0, 0.05);
}

TEST(TreeAgainstRing, FewerHopsWinWhereLatencyDominates) {
  const uint64_t bytes = 64 << 10;
  const double latency = 20e-6;
  const double ring = SteadySeconds(16, bytes, latency, 0, "Ring");
  const double tree = SteadySeconds(16, bytes, latency, 0, "Tree");
  // Latency terms alone: 2 (W - 1) = 30 ring hops against 2 x 4 tree hops.
  std::printf("W=16, 64 KiB, 20 us: ring %.6f s, tree %.6f s: %.2fx\n", ring, tree, ring / tree);
  EXPECT_GT(ring / tree, 2.5);
  EXPECT_LT(ring / tree, 30.0 / 8);
}

}  // namespace
}  // namespace nbox::testing
