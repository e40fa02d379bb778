// network.routing = flowlet end to end (issue 14 part 4), on scenarios/whatif-roce-spray.ini:
// 8 ranks on a 4:1 leaf-spine whose seed hashes both ring flows of a leaf onto one spine, so
// per-flow ECMP runs the all-reduce at half the rate the fabric has (scenarios/README.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/cosim/job_fixture.h"
#include "tools/scenario/scenario.h"

namespace nbox::testing {
namespace {

double IterationSeconds(const std::string& transport, std::vector<std::string> overrides) {
  overrides.push_back("network.transport=" + transport);
  overrides.push_back("workload.iterations=1");
  const ScenarioOutcome outcome =
      RunScenario(scenario::LoadScenario("scenarios/whatif-roce-spray.ini", overrides));
  EXPECT_TRUE(outcome.finished);
  return outcome.summary.iterations.at(0).time_s;
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

}  // namespace
}  // namespace nbox::testing
