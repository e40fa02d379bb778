// Direct (one-shot) all-reduce on a non-blocking star against its alpha-beta closed form: every
// rank sends the ring's 2(W-1)/W S through its link, spread over its W - 1 peers at once, and a
// chunk crosses two message hops (its segment to its owner, the sum back):
//   T = 2(W-1)/W S / B + 2 L
// with B the goodput and L the per-hop latency of tests/cosim/alpha_beta.h.
#include <gtest/gtest.h>

#include <cstdio>
#include <tuple>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"

namespace nbox::testing {
namespace {

constexpr uint32_t kMtu = 9000;

TEST(DirectAlphaBeta, SteadyIterationWithinFivePercent) {
  for (const auto& [world, bytes, latency] :
       {std::tuple{4, uint64_t{16} << 20, 1e-6}, std::tuple{8, uint64_t{32} << 20, 1e-6},
        std::tuple{16, uint64_t{64} << 10, 20e-6}}) {
    StarJob setup;
    setup.world = world;
    setup.latency_s = latency;
    setup.network.mtu = kMtu;
    setup.all_reduce_algorithm = "Direct";
    const double measured = SteadyAllReduceSeconds(setup, bytes);
    const double expected = 2.0 * (world - 1) / world * static_cast<double>(bytes) /
                                GoodputBytesPerSecond(setup.rate_bps, kMtu) +
                            2 * StepLatencySeconds(setup.rate_bps, latency, kMtu);
    std::printf("W=%d S=%llu: simulated %.6f s, alpha-beta %.6f s, ratio %.4f\n", world,
                static_cast<unsigned long long>(bytes), measured, expected, measured / expected);
    EXPECT_NEAR(measured / expected, 1.0, 0.05) << "W=" << world;
  }
}

}  // namespace
}  // namespace nbox::testing
