// network.routing = flowlet and spray end to end, on
// scenarios/whatif-roce-spray.ini: 8 ranks on a 4:1 leaf-spine whose seed hashes both ring
// flows of a leaf onto one spine, so per-flow ECMP runs the all-reduce at half the rate the
// fabric has (scenarios/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/cosim/job_fixture.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

ScenarioOutcome RunWhatIf(const std::string& transport, std::vector<std::string> overrides) {
  overrides.push_back("network.transport=" + transport);
  overrides.push_back("workload.iterations=1");
  ScenarioOutcome outcome =
      RunScenario(scenario::LoadScenario("scenarios/whatif-roce-spray.ini", overrides));
  EXPECT_TRUE(outcome.finished);
  return outcome;
}

double IterationSeconds(const std::string& transport, std::vector<std::string> overrides) {
  return RunWhatIf(transport, std::move(overrides)).summary.iterations.at(0).time_s;
}

// No connection pauses for a second inside one iteration, so every one stays in its first
// flowlet, which takes its ECMP path: the same run as ECMP, to the nanosecond.
TEST(FlowletRouting, ATimeoutLongerThanEveryPauseIsPerFlowEcmp) {
  for (const std::string transport : {"tcp", "roce"}) {
    const double ecmp = IterationSeconds(transport, {"network.routing=ecmp"});
    const double flowlet =
        IterationSeconds(transport, {"network.routing=flowlet", "network.flowlet_timeout=1s"});
    EXPECT_EQ(flowlet, ecmp) << transport;
  }
}

// TCP sends in bursts (a window, then a wait for ACKs; a ring step, then a wait for the next
// chunk), so flowlets form inside one ring step and LetFlow's random draws spread the two flows
// over both spines: far from the collision's time, never below the non-blocking fabric's.
TEST(FlowletRouting, TcpFlowletsUndoMostOfAnEcmpCollision) {
  const double ecmp = IterationSeconds("tcp", {"network.routing=ecmp"});
  const double flowlet = IterationSeconds("tcp", {"network.routing=flowlet"});
  const double non_blocking =
      IterationSeconds("tcp", {"network.routing=ecmp", "topology.oversubscription=1"});
  std::printf("TCP: ECMP %.3f ms, flowlets (500 us) %.3f ms, non-blocking %.3f ms\n", ecmp * 1e3,
              flowlet * 1e3, non_blocking * 1e3);
  EXPECT_GT(ecmp, 1.5 * non_blocking);  // the seed does collide
  EXPECT_LT(flowlet, 0.85 * ecmp);
  EXPECT_GE(flowlet, 0.99 * non_blocking);
}

// Spraying on the TCP path: the leaves send forwarded packets to the two spines in turn, so
// each leaf's two uplinks carry the same number of packets. The unequal queues of the two
// spines reorder by more than TCP tolerates: three duplicate ACKs (Linux's tcp_reordering), or
// RACK's reordering window (a quarter of the min RTT, widened a step per round trip with a
// spurious retransmission, at most SRTT), so it retransmits without a drop. With
// network.tcp_reordering = 64 and RACK-TLP off, a reordering-tolerant receiver's stand-in, the
// job runs far from ECMP's collision and not below the non-blocking fabric.
TEST(LoadBalancing, TcpSprayingSplitsEveryLeafsUplinkBytesEvenly) {
  const ScenarioOutcome sprayed = RunWhatIf("tcp", {"network.routing=spray"});
  // leaf -> spine ports by "leaf->spine". Every packet a leaf forwards to the other leaf
  // takes the next spine in turn: the counts differ by at most one. Bytes follow within 1%
  // (data and ACK packets share the counter).
  std::map<std::string, ns3::NboxPortStats> uplinks;
  for (const ns3::NboxPortStats& port : sprayed.result.network.ports) {
    if (port.fromNode.rfind("leaf", 0) == 0 && port.toNode.rfind("spine", 0) == 0) {
      uplinks[port.fromNode + "->" + port.toNode] = port;
    }
  }
  ASSERT_EQ(uplinks.size(), 4u);
  for (const std::string leaf : {"leaf0", "leaf1"}) {
    const ns3::NboxPortStats& a = uplinks.at(leaf + "->spine0");
    const ns3::NboxPortStats& b = uplinks.at(leaf + "->spine1");
    EXPECT_GT(a.txPackets, 10000u) << leaf;  // the all-reduce crosses the leaves
    EXPECT_LE(std::max(a.txPackets, b.txPackets) - std::min(a.txPackets, b.txPackets), 1u) << leaf;
    EXPECT_NEAR(static_cast<double>(a.txBytes) / static_cast<double>(b.txBytes), 1.0, 0.01) << leaf;
  }
  EXPECT_EQ(sprayed.result.network.drops, 0u);
  EXPECT_GT(sprayed.result.transport.retransmissions, 0u);

  const double ecmp = IterationSeconds("tcp", {"network.routing=ecmp"});
  const double tolerant = IterationSeconds(
      "tcp", {"network.routing=spray", "network.tcp_reordering=64", "network.tcp_rack_tlp=off"});
  const double non_blocking =
      IterationSeconds("tcp", {"network.routing=ecmp", "topology.oversubscription=1"});
  std::printf(
      "TCP: ECMP %.3f ms, sprayed %.3f ms (tcp_reordering 64, RACK-TLP off: %.3f ms), "
      "non-blocking "
      "%.3f ms\n",
      ecmp * 1e3, sprayed.summary.iterations.at(0).time_s * 1e3, tolerant * 1e3,
      non_blocking * 1e3);
  EXPECT_LT(tolerant, 0.7 * ecmp);
  EXPECT_GE(tolerant, 0.99 * non_blocking);
}

// The analytical model counts a sprayed connection's bytes on every port by its share, so the
// two flows that ECMP puts on one spine (seed 1) load both spines by half: the time of a seed
// whose hash keeps them apart (seed 3 on RoCE), not the collision's.
TEST(LoadBalancing, TheAnalyticalModelSpreadsSprayedBytesOverTheSpines) {
  const std::vector<std::string> analytical = {"network.model=analytical"};
  auto with = [&](std::vector<std::string> keys) {
    keys.insert(keys.end(), analytical.begin(), analytical.end());
    return IterationSeconds("roce", keys);
  };
  const double sprayed = with({"network.routing=spray"});
  const double collided = with({"network.routing=ecmp"});
  const double apart = with({"network.routing=ecmp", "job.seed=3"});
  std::printf("analytical: sprayed %.3f ms, ECMP collided %.3f ms, apart %.3f ms\n", sprayed * 1e3,
              collided * 1e3, apart * 1e3);
  EXPECT_GT(collided, 1.5 * apart);  // seed 1 collides, seed 3 does not
  EXPECT_NEAR(sprayed / apart, 1.0, 0.001);
}

}  // namespace
}  // namespace nbox::testing
