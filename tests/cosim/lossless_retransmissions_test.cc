// A lossless network at default settings retransmits nothing: ring all-reduces on a star
// (where no port is ever oversubscribed, so nothing is dropped) across link rates from
// 1 Gb/s to 400 Gb/s and sizes from 1 MB to 256 MB, with the TCP defaults of a scenario
// (MTU 1500, Cubic, 2 channels of 1 MiB chunks). Before TCP Small Queues, nanosecond RTT
// samples and Linux's 200 ms minimum RTO, W = 8 x 16 MB at 1 Gb/s retransmitted 15,648
// segments without a drop and took 12% longer.
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
  double rate_bps;
  uint64_t bytes;
};

std::string Describe(const Case& c) {
  return "W" + std::to_string(c.world) + "_" + std::to_string(static_cast<int>(c.rate_bps / 1e9)) +
         "Gbps_" + std::to_string(c.bytes / 1000000) + "MB";
}

// Readable names in test listings (ctest shows both).
void PrintTo(const Case& c, std::ostream* os) {
  *os << Describe(c);
}
std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return Describe(info.param);
}

class LosslessRetransmissions : public ::testing::TestWithParam<Case> {};

TEST_P(LosslessRetransmissions, NoDropsAndNoRetransmissions) {
  const Case c = GetParam();
  StarJob setup;
  setup.world = c.world;
  setup.rate_bps = c.rate_bps;
  setup.channels = 2;
  setup.chunk_bytes = 1 << 20;
  const auto outcome = RunOnStar(setup, AllReduceProgram(c.bytes, 1));
  ASSERT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.network.drops, 0u);
  EXPECT_EQ(outcome.transport.retransmissions, 0u);
  EXPECT_EQ(outcome.transport.bytesDelivered, outcome.schedule_bytes);
  // Nothing is lost to stalls either: the bandwidth term of the ring's alpha-beta time is
  // a lower bound, and the whole time (slow start included) stays close to it.
  ASSERT_EQ(outcome.summary.iterations.size(), 1u);
  const double measured = outcome.summary.iterations[0].time_s;
  const double bound = AlphaBetaSeconds(c.world, static_cast<double>(c.bytes), c.rate_bps,
                                        setup.latency_s, setup.network.mtu);
  std::printf("W=%d %.0f Gb/s %llu B: %.6f s, alpha-beta %.6f s, ratio %.3f\n", c.world,
              c.rate_bps / 1e9, static_cast<unsigned long long>(c.bytes), measured, bound,
              measured / bound);
  EXPECT_GE(measured / bound, 0.97);
  // Where bandwidth dominates, within 5% of it (the old spurious timeouts cost 12%); 1 MB
  // and 400 Gb/s runs are dominated by slow start's RTT-bound ramp in this first iteration.
  if (c.bytes >= 16000000 && c.rate_bps <= 100e9) {
    EXPECT_LE(measured / bound, 1.05);
  }
}

INSTANTIATE_TEST_SUITE_P(Star, LosslessRetransmissions,
                         ::testing::Values(Case{8, 1e9, 1000000}, Case{8, 10e9, 1000000},
                                           Case{8, 100e9, 1000000}, Case{8, 400e9, 1000000},
                                           Case{8, 1e9, 16000000}, Case{8, 10e9, 16000000},
                                           Case{8, 100e9, 16000000}, Case{8, 400e9, 16000000},
                                           Case{4, 1e9, 64000000}, Case{4, 10e9, 64000000},
                                           Case{4, 100e9, 64000000}, Case{4, 400e9, 64000000},
                                           Case{2, 1e9, 256000000}, Case{2, 10e9, 256000000},
                                           Case{2, 100e9, 256000000}, Case{2, 400e9, 256000000}),
                         CaseName);

}  // namespace
}  // namespace nbox::testing
