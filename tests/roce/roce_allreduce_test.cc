// Ring all-reduce on the RoCE path against closed forms:
//  - on a non-blocking star, the alpha-beta time T = 2(W-1)/W * S / B + 2(W-1) * L, as the
//    TCP path's test (tests/cosim/ring_alpha_beta_test.cc), with B the RoCE goodput of a host
//    link (rate x payload / wire bytes of a packet) and L two propagation delays plus the
//    switch's store-and-forward of one packet;
//  - on a leaf-spine whose every ring hop crosses the spine, 2:1 oversubscription slows the
//    all-reduce by the ratio of the two closed forms (bandwidth term: each leaf uplink carries
//    four of the ring's flows).
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "ns3/boolean.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/string.h"
#include "tests/cosim/job_fixture.h"
#include "tests/roce/roce_job_fixture.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

// Bytes a data packet carries besides its payload on the wire, and those counted in the IP
// MTU (IPv4 20, UDP 8, BTH 12, ICRC 4): written out here, not read from the code under test.
constexpr double kWireOverhead = 14 + 20 + 8 + 12 + 4 + 4;
constexpr double kMtuOverhead = 20 + 8 + 12 + 4;

double PayloadPerPacket(uint32_t mtu) {
  return mtu - kMtuOverhead;
}
double WirePacket(uint32_t mtu) {
  return PayloadPerPacket(mtu) + kWireOverhead;
}

// Payload bytes/s a flow gets from `rate_bps` of wire capacity.
double Goodput(double rate_bps, uint32_t mtu) {
  return rate_bps / 8 * PayloadPerPacket(mtu) / WirePacket(mtu);
}

struct StarCase {
  int world;
  uint64_t bytes;
  uint32_t mtu;
  double latency_s;
};

class RoceRingAlphaBeta : public ::testing::TestWithParam<StarCase> {};

TEST_P(RoceRingAlphaBeta, AllReduceWithinFivePercent) {
  const StarCase c = GetParam();
  constexpr double kRate = 100e9;
  RoceJob job;
  job.topology = topo::MakeStar(c.world, kRate, c.latency_s);
  job.rank_to_host = topo::PlaceRanks(job.topology, c.world);
  job.configure = [&c](ns3::NboxRoceNetworkHelper& helper) { helper.SetMtu(c.mtu); };
  const auto outcome = RunRoceJob(job, AllReduceProgram(c.bytes, 1));
  ASSERT_TRUE(outcome.finished);
  const double measured = outcome.summary.iterations.at(0).time_s;
  const double steps = 2.0 * (c.world - 1);
  const double step_latency = 2 * c.latency_s + WirePacket(c.mtu) * 8 / kRate;
  const double expected = steps / c.world * c.bytes / Goodput(kRate, c.mtu) + steps * step_latency;
  std::printf("RoCE W=%d S=%llu MTU=%u: simulated %.6f s, alpha-beta %.6f s, ratio %.4f\n", c.world,
              static_cast<unsigned long long>(c.bytes), c.mtu, measured, expected,
              measured / expected);
  EXPECT_NEAR(measured / expected, 1.0, 0.05);
  EXPECT_EQ(outcome.network.drops, 0u);
  EXPECT_EQ(outcome.transport.retransmissions, 0u);
}

INSTANTIATE_TEST_SUITE_P(Star, RoceRingAlphaBeta,
                         ::testing::Values(StarCase{4, 16 << 20, 9000, 1e-6},
                                           StarCase{8, 32 << 20, 9000, 1e-6},
                                           StarCase{4, 4 << 20, 1500, 1e-6},
                                           StarCase{8, 256 << 10, 9000, 20e-6}),
                         [](const ::testing::TestParamInfo<StarCase>& info) {
                           const StarCase& c = info.param;
                           return "W" + std::to_string(c.world) + "_" + std::to_string(c.bytes) +
                                  "B_Mtu" + std::to_string(c.mtu) + "_" +
                                  std::to_string(static_cast<int>(c.latency_s * 1e9)) + "ns";
                         });

// Leaf-spine: 2 leaves of 4 hosts, one spine; ranks alternate between the leaves
// (rank 2i on host i, rank 2i+1 on host 4+i), so every ring hop crosses the spine and each
// leaf uplink carries 4 flows in each direction.
double CrossingRingSeconds(double bytes, int world, double host_bps, double fabric_bps,
                           double latency_s, uint32_t mtu) {
  const double flows_per_uplink = 4;
  const double per_flow_bps = std::min(host_bps, fabric_bps / flows_per_uplink);
  const double steps = 2.0 * (world - 1);
  // host -> leaf -> spine -> leaf -> host: four propagation delays; the last packet is
  // stored and forwarded by the first leaf, the spine and the second leaf.
  const double wire_bits = WirePacket(mtu) * 8;
  const double step_latency =
      4 * latency_s + wire_bits / fabric_bps + wire_bits / fabric_bps + wire_bits / host_bps;
  return steps / world * bytes / Goodput(per_flow_bps, mtu) + steps * step_latency;
}

double RunCrossingRing(double fabric_bps, uint64_t bytes, uint32_t mtu, const char* cc,
                       bool clamp_target_rate = false) {
  RoceJob job;
  job.topology = topo::MakeLeafSpine(2, 1, 4, 100e9, fabric_bps, 1e-6);
  job.rank_to_host = {0, 4, 1, 5, 2, 6, 3, 7};
  job.configure = [mtu, cc, clamp_target_rate](ns3::NboxRoceNetworkHelper& helper) {
    helper.SetMtu(mtu);
    helper.SetNicAttribute("CongestionControl", ns3::StringValue(cc));
    helper.SetNicAttribute("ClampTargetRate", ns3::BooleanValue(clamp_target_rate));
  };
  const auto outcome = RunRoceJob(job, AllReduceProgram(bytes, 1));
  EXPECT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.network.drops, 0u);
  return outcome.summary.iterations.at(0).time_s;
}

// The closed form assumes a work-conserving fabric: with PFC alone (roce.cc = none) the leaf
// uplink is busy whenever data waits, so the measured ratio must match it. DCQCN is not
// work-conserving: each ring step starts four QPs at line rate into the 2:1 uplink, and the
// run of cuts that follows leaves the uplink partly idle while the rates recover. How long
// depends on the switches' ECN draws, so DCQCN runs over eight RNG seeds (measured: 1.13x to
// 1.44x the work-conserving time with the NICs' target rule, 1.50x to 1.94x with the paper's).
// With the NICs' rule (the default, roce.clamp_target_rate = off) fast recovery returns to the
// target the run started from: on average within 30% of the work-conserving time (measured
// 1.21x). With the DCQCN paper's rule every cut also lowers the target and recovery is
// additive: on average at least 1.5x it (measured 1.71x), and slower than the NICs' rule on
// every seed (this was the "3.5x instead of 2x" once, against the non-blocking fabric;
// scenarios/README.md discusses it).
TEST(RoceOversubscription, TwoToOneSlowsTheAllReduceByTheTheoreticalRatio) {
  const uint64_t bytes = 32 << 20;
  const uint32_t mtu = 9000;
  const double expected = CrossingRingSeconds(bytes, 8, 100e9, 200e9, 1e-6, mtu) /
                          CrossingRingSeconds(bytes, 8, 100e9, 400e9, 1e-6, mtu);
  const double non_blocking = RunCrossingRing(400e9, bytes, mtu, "none");
  const double oversubscribed = RunCrossingRing(200e9, bytes, mtu, "none");
  std::printf("PFC only: non-blocking %.6f s, 2:1 %.6f s, ratio %.4f, theory %.4f\n", non_blocking,
              oversubscribed, oversubscribed / non_blocking, expected);
  EXPECT_NEAR(oversubscribed / non_blocking / expected, 1.0, 0.10);

  constexpr uint32_t kSeeds = 8;
  double nic_rule_sum = 0;
  double paper_rule_sum = 0;
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
    ns3::RngSeedManager::SetSeed(seed);
    const double nic_rule = RunCrossingRing(200e9, bytes, mtu, "dcqcn") / oversubscribed;
    ns3::RngSeedManager::SetSeed(seed);
    const double paper_rule = RunCrossingRing(200e9, bytes, mtu, "dcqcn", true) / oversubscribed;
    std::printf(
        "seed %u: DCQCN on 2:1 at %.2fx the work-conserving time, %.2fx with the "
        "paper's target rule\n",
        seed, nic_rule, paper_rule);
    EXPECT_GE(nic_rule, 0.99) << "seed " << seed;
    EXPECT_GT(paper_rule, nic_rule) << "seed " << seed;
    nic_rule_sum += nic_rule;
    paper_rule_sum += paper_rule;
  }
  ns3::RngSeedManager::SetSeed(1);
  EXPECT_LE(nic_rule_sum / kSeeds, 1.30);
  EXPECT_GE(paper_rule_sum / kSeeds, 1.5);
}

// Per-flow ECMP against per-packet spraying. Two leaves of four hosts, two
// spines, every leaf-spine link 50 Gb/s (4:1); a ring over consecutive hosts on two channels
// leaves each leaf once per channel, so two flows meet at a leaf's two uplinks. Apart, each
// runs at 50 Gb/s, as fast as the host links let two channels go anyway (the non-blocking
// time); hashed onto one spine they share its 50 Gb/s, and the bandwidth term doubles. PFC
// alone (roce.cc = none), so that the fabric is work-conserving and the closed forms hold.
double RunSprayCase(bool spray, uint64_t seed, uint64_t bytes, uint32_t mtu) {
  RoceJob job;
  job.topology = topo::MakeLeafSpine(2, 2, 4, 100e9, 50e9, 1e-6);
  job.rank_to_host = {0, 1, 2, 3, 4, 5, 6, 7};
  job.channels = 2;
  job.configure = [spray, seed, mtu](ns3::NboxRoceNetworkHelper& helper) {
    helper.SetMtu(mtu);
    helper.SetEcmpSeed(seed);
    helper.SetNicAttribute("CongestionControl", ns3::StringValue("none"));
    helper.SetSwitchAttribute("LoadBalancing", ns3::StringValue(spray ? "Spray" : "Ecmp"));
    helper.SetNicAttribute("AcceptOutOfOrder", ns3::BooleanValue(spray));
  };
  const auto outcome = RunRoceJob(job, AllReduceProgram(bytes, 1));
  EXPECT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.network.drops, 0u);
  EXPECT_EQ(outcome.nic.retransmittedPackets, 0u);
  return outcome.summary.iterations.at(0).time_s;
}

TEST(RoceLoadBalancing, SprayingGivesCollidingRingFlowsTheirOwnPaths) {
  const uint64_t bytes = 16 << 20;
  const uint32_t mtu = 9000;
  const int world = 8;
  const double steps = 2.0 * (world - 1);
  const double wire_bits = WirePacket(mtu) * 8;
  // A crossing hop: four propagation delays, the last packet stored and forwarded by two
  // leaves (onto 50 Gb/s, then 100 Gb/s) and the spine (50 Gb/s).
  const double step_latency = 4 * 1e-6 + 2 * wire_bits / 50e9 + wire_bits / 100e9;
  auto ring_seconds = [&](double per_flow_bps) {
    return steps / world * (bytes / 2.0) / Goodput(per_flow_bps, mtu) + steps * step_latency;
  };
  const double apart = ring_seconds(50e9);
  const double shared = ring_seconds(25e9);
  int collisions = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const double ecmp = RunSprayCase(false, seed, bytes, mtu);
    const double spray = RunSprayCase(true, seed, bytes, mtu);
    std::printf("seed %llu: ECMP %.6f s, spray %.6f s (apart %.6f s, sharing a spine %.6f s)\n",
                static_cast<unsigned long long>(seed), ecmp, spray, apart, shared);
    EXPECT_NEAR(spray / apart, 1.0, 0.05) << "seed " << seed;
    if (ecmp > 1.5 * apart) {
      ++collisions;
      EXPECT_NEAR(ecmp / shared, 1.0, 0.05) << "seed " << seed;
    } else {
      EXPECT_NEAR(ecmp / apart, 1.0, 0.05) << "seed " << seed;
    }
  }
  EXPECT_GT(collisions, 0);  // the hash put both flows of a leaf on one spine for some seed
}

}  // namespace
}  // namespace nbox::testing

namespace nbox::testing {
namespace {

// The switches' ECN draws (between ecn_kmin and ecn_kmax) come from a fixed stream per switch,
// not from one ns-3 numbers by how many random variables the process made before: two DCQCN
// runs of one scenario in one process mark the same packets and take the same time.
TEST(RoceDeterminism, TwoDcqcnRunsInOneProcessAreTheSame) {
  const std::vector<std::string> keys = {"workload.iterations=1"};
  const ScenarioOutcome first =
      RunScenario(scenario::LoadScenario("scenarios/whatif-roce.ini", keys));
  const ScenarioOutcome second =
      RunScenario(scenario::LoadScenario("scenarios/whatif-roce.ini", keys));
  ASSERT_TRUE(first.finished);
  ASSERT_TRUE(second.finished);
  EXPECT_GT(first.result.network.ecnMarks, 0u);  // the draws are used
  EXPECT_EQ(second.result.network.ecnMarks, first.result.network.ecnMarks);
  EXPECT_EQ(second.summary.iterations.at(0).time_s, first.summary.iterations.at(0).time_s);
}

}  // namespace
}  // namespace nbox::testing
