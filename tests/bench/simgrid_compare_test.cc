// nbox's flow model against SimGrid's max-min solver (tools/bench/simgrid_compare.h) on the
// same messages: SimGrid is the independent reference for flow-level max-min sharing, so the
// flow model must give its completion times. Each test runs in a process of its own (one
// SimGrid engine per process).
#include "tools/bench/simgrid_compare.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace nbox::bench {
namespace {

coll::CollectiveSpec Spec(coll::CollectiveOp op, coll::Algorithm algorithm, int world,
                          uint64_t bytes, int channels) {
  coll::CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = algorithm;
  spec.world_size = world;
  spec.bytes = bytes;
  spec.channels = channels;
  return spec;
}

// A ring moves one flow per port at a time, so SimGrid's latency-first timing equals nbox's
// latency-after: the times differ only by nbox rounding each delivery delay to the
// nanosecond, once per message on the critical path (2(W - 1) steps).
void ExpectRingTimesAgree(const topo::Topology& topology, int world) {
  const MessageDag dag =
      MessagesOf(Spec(coll::CollectiveOp::kAllReduce, coll::Algorithm::kRing, world, 8 << 20, 2));
  const ComparedNetwork net = PrepareNetwork(topology, 9000, dag, true);
  const DagRun nbox = RunOnFlowModel(dag, net);
  const DagRun simgrid = RunOnSimGrid(dag, net);
  EXPECT_EQ(nbox.delivered, dag.messages.size());
  EXPECT_EQ(simgrid.delivered, dag.messages.size());
  EXPECT_NEAR(nbox.simulated_s, simgrid.simulated_s, 2.0 * (world - 1) * 1e-9);
}

TEST(FlowModelAgainstSimGrid, RingAllReduceOnAStar) {
  ExpectRingTimesAgree(topo::MakeStar(16, 100e9, 1e-6), 16);
}

TEST(FlowModelAgainstSimGrid, RingAllReduceOnALeafSpine) {
  ExpectRingTimesAgree(topo::MakeLeafSpine(4, 4, 8, 100e9, 100e9, 1e-6), 32);
}

// Every pair at once over a 2:1 oversubscribed leaf-spine: the uplinks are shared by many
// flows of different lengths, so SimGrid's routes carry no latency (plain max-min) and nbox's
// messages arrive after their delivery delay: the last arrival is later in nbox by at most the
// longest delivery delay and not earlier.
TEST(FlowModelAgainstSimGrid, DirectAllToAllOnAnOversubscribedLeafSpine) {
  const MessageDag dag =
      MessagesOf(Spec(coll::CollectiveOp::kAllToAll, coll::Algorithm::kDirect, 32, 4 << 20, 1));
  const ComparedNetwork net =
      PrepareNetwork(topo::MakeLeafSpine(4, 4, 8, 100e9, 100e9, 1e-6), 9000, dag, false);
  double longest_delay = 0;
  for (const DagMessage& m : dag.messages) {
    longest_delay = std::max(
        longest_delay, net.network->GetDeliveryDelaySeconds(net.routes[m.connection], m.bytes));
  }
  const DagRun nbox = RunOnFlowModel(dag, net);
  const DagRun simgrid = RunOnSimGrid(dag, net);
  EXPECT_EQ(simgrid.delivered, dag.messages.size());
  EXPECT_GE(nbox.simulated_s, simgrid.simulated_s);
  EXPECT_LE(nbox.simulated_s, simgrid.simulated_s + longest_delay + 1e-9);
}

}  // namespace
}  // namespace nbox::bench
