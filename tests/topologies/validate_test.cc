// Topology::Validate on hand-built graphs, each broken in exactly one way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <stdexcept>

#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::testing::HasSubstr;

// h0, h1 on switch s0: valid.
Topology TwoHostsOneSwitch() {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1");
  const Vertex s0 = t.AddSwitch("s0");
  t.AddLink(h0, s0, 1e9, 1e-6);
  t.AddLink(h1, s0, 1e9, 1e-6);
  return t;
}

void ExpectInvalid(const Topology& t, const std::string& message_part) {
  try {
    t.Validate();
    ADD_FAILURE() << "Validate accepted a topology; expected: " << message_part;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(message_part));
  }
}

TEST(TopoValidate, AcceptsAValidGraph) {
  EXPECT_NO_THROW(TwoHostsOneSwitch().Validate());
}

TEST(TopoValidate, RejectsDuplicateAndEmptyNames) {
  Topology dup = TwoHostsOneSwitch();
  dup.graph[dup.hosts[1]].name = "h0";
  ExpectInvalid(dup, "name 'h0' is used by vertices 0 and 1");
  Topology empty = TwoHostsOneSwitch();
  empty.graph[2].name = "";
  ExpectInvalid(empty, "vertex 2 has an empty name");
}

TEST(TopoValidate, RejectsAHostListThatDisagreesWithTheGraph) {
  ExpectInvalid(Topology{}, "no host");
  Topology missing = TwoHostsOneSwitch();
  missing.hosts.pop_back();
  ExpectInvalid(missing, "host 'h1' is missing from hosts");
  Topology with_switch = TwoHostsOneSwitch();
  with_switch.hosts.push_back(2);
  ExpectInvalid(with_switch, "hosts[2] is 's0', a switch");
  Topology twice = TwoHostsOneSwitch();
  twice.hosts[1] = twice.hosts[0];
  ExpectInvalid(twice, "host 'h0' is listed twice");
  Topology out_of_range = TwoHostsOneSwitch();
  out_of_range.hosts.push_back(7);
  ExpectInvalid(out_of_range, "hosts[2] = 7 is not a vertex");
}

TEST(TopoValidate, RejectsLinkIdsThatAreNotPositions) {
  Topology swapped = TwoHostsOneSwitch();
  std::swap(swapped.links[0], swapped.links[1]);
  ExpectInvalid(swapped, "which is not its position in links");
  Topology unlisted = TwoHostsOneSwitch();
  boost::add_edge(0, 2, LinkProps{2, 1e9, 0}, unlisted.graph);
  ExpectInvalid(unlisted, "links lists 2 links but the graph has 3");
}

TEST(TopoValidate, RejectsBadLinks) {
  Topology loop = TwoHostsOneSwitch();
  loop.AddLink(2, 2, 1e9, 0);
  ExpectInvalid(loop, "link 2 joins 's0' to itself");
  Topology zero_rate = TwoHostsOneSwitch();
  zero_rate.graph[zero_rate.links[1]].rate_bps = 0;
  ExpectInvalid(zero_rate, "link 1 (h1-s0) has rate 0");
  Topology nan_rate = TwoHostsOneSwitch();
  nan_rate.graph[nan_rate.links[0]].rate_bps = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalid(nan_rate, "expected a rate from 1Mbps to 10Tbps");
  Topology slow = TwoHostsOneSwitch();
  slow.graph[slow.links[0]].rate_bps = 0.5;
  ExpectInvalid(slow, "has rate 0.5 bits/s; expected a rate from 1Mbps to 10Tbps");
  Topology negative_latency = TwoHostsOneSwitch();
  negative_latency.graph[negative_latency.links[0]].latency_s = -1e-6;
  ExpectInvalid(negative_latency, "expected a latency from 0s to 1s");
  Topology far = TwoHostsOneSwitch();
  far.graph[far.links[0]].latency_s = 1e300;
  ExpectInvalid(far, "expected a latency from 0s to 1s");
}

TEST(TopoValidate, RejectsUnlinkedHostsAndDisconnectedGraphs) {
  Topology unlinked = TwoHostsOneSwitch();
  unlinked.AddHost("h2");
  ExpectInvalid(unlinked, "host 'h2' has no link");
  Topology islands = TwoHostsOneSwitch();
  const Vertex h2 = islands.AddHost("h2"), s1 = islands.AddSwitch("s1");
  islands.AddLink(h2, s1, 1e9, 0);
  ExpectInvalid(islands, "'h2' is not connected to 'h0'");
}

TEST(TopoValidate, RejectsHostsJoinedOnlyThroughAnotherHost) {
  // h0 - s0 - h1 - s1 - h2 is connected, but h1 would have to forward h0's traffic to h2.
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1"), h2 = t.AddHost("h2");
  const Vertex s0 = t.AddSwitch("s0"), s1 = t.AddSwitch("s1");
  t.AddLink(h0, s0, 1e9, 0);
  t.AddLink(h1, s0, 1e9, 0);
  t.AddLink(h1, s1, 1e9, 0);
  t.AddLink(h2, s1, 1e9, 0);
  ExpectInvalid(t, "hosts 'h0' and 'h2' are joined only through other hosts");
  // A link between the two switches makes it valid.
  t.AddLink(s0, s1, 1e9, 0);
  EXPECT_NO_THROW(t.Validate());
}

TEST(TopoValidate, AcceptsHostsJoinedByDirectLinksOnly) {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1");
  t.AddLink(h0, h1, 1e9, 0);
  EXPECT_NO_THROW(t.Validate());
  // A third host hanging off h1 can reach h0 only through h1.
  t.AddLink(t.AddHost("h2"), h1, 1e9, 0);
  ExpectInvalid(t, "hosts 'h0' and 'h2' are joined only through other hosts");
}

// Edge descriptors point into their graph; a copy must point into its own.
TEST(TopoValidate, CopiesAndMovesStayValidAfterTheOriginalIsGone) {
  auto original = std::make_unique<Topology>(MakeLeafSpine(2, 2, 2, 1e9, 1e9, 0));
  Topology copy(*original);
  Topology assigned;
  assigned = *original;
  Topology moved(std::move(*original));
  original.reset();
  for (const Topology* t : {&copy, &assigned, &moved}) {
    EXPECT_NO_THROW(t->Validate());
    ASSERT_EQ(t->links.size(), 8u);
    const Edge fabric = t->links[5];  // 4 host links, then leaf0-spine0, leaf0-spine1, ...
    EXPECT_EQ(t->graph[fabric].id, 5u);
    EXPECT_EQ(t->graph[boost::source(fabric, t->graph)].name, "leaf0");
    EXPECT_EQ(t->graph[boost::target(fabric, t->graph)].name, "spine1");
  }
}

}  // namespace
}  // namespace nbox::topo
