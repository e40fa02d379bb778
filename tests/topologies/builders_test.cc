// The standard builders against hand-counted sizes, names and wiring.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "tests/topologies/test_graphs.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::LinkEnds;
using ::nbox::topo::testing::VertexNamed;
using ::testing::HasSubstr;

size_t SwitchCount(const Topology& t) {
  return boost::num_vertices(t.graph) - t.hosts.size();
}

void ExpectDenseLinkIds(const Topology& t) {
  ASSERT_EQ(t.links.size(), boost::num_edges(t.graph));
  for (uint32_t i = 0; i < t.links.size(); ++i) EXPECT_EQ(t.graph[t.links[i]].id, i);
}

void ExpectHostsNamedInOrder(const Topology& t) {
  for (size_t i = 0; i < t.hosts.size(); ++i) {
    EXPECT_EQ(t.graph[t.hosts[i]].name, "h" + std::to_string(i));
    EXPECT_EQ(t.graph[t.hosts[i]].kind, NodeKind::kHost);
  }
}

template <typename F>
void ExpectInvalidArgument(F make, const std::string& message_part) {
  try {
    make();
    ADD_FAILURE() << "expected std::invalid_argument mentioning " << message_part;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(message_part));
  }
}

TEST(TopoBuilders, StarHasOneSwitchAndHostLinkIdEqualsHostIndex) {
  const Topology t = MakeStar(5, 25e9, 2e-6);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.hosts.size(), 5u);
  EXPECT_EQ(SwitchCount(t), 1u);
  EXPECT_EQ(t.links.size(), 5u);
  ExpectHostsNamedInOrder(t);
  ExpectDenseLinkIds(t);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(LinkEnds(t, i), "h" + std::to_string(i) + "-sw0");
    EXPECT_EQ(t.graph[t.links[i]].rate_bps, 25e9);
    EXPECT_EQ(t.graph[t.links[i]].latency_s, 2e-6);
  }
  EXPECT_EQ(t.graph[VertexNamed(t, "sw0")].kind, NodeKind::kSwitch);
  EXPECT_THAT(t.description, HasSubstr("star, 5 hosts"));
}

TEST(TopoBuilders, LeafSpine4x2With4HostsPerLeafHas16Hosts6Switches24Links) {
  const Topology t = MakeLeafSpine(4, 2, 4, 100e9, 40e9, 1e-6);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.hosts.size(), 16u);
  EXPECT_EQ(SwitchCount(t), 6u);
  EXPECT_EQ(t.links.size(), 24u);  // 16 host links + 4 * 2 fabric links
  ExpectHostsNamedInOrder(t);
  ExpectDenseLinkIds(t);
  // Host links first: host 5 sits on leaf 5 / 4 = 1.
  EXPECT_EQ(LinkEnds(t, 5), "h5-leaf1");
  EXPECT_EQ(t.graph[t.links[5]].rate_bps, 100e9);
  // Fabric link of leaf l and spine s is 16 + 2 l + s.
  EXPECT_EQ(LinkEnds(t, 16), "leaf0-spine0");
  EXPECT_EQ(LinkEnds(t, 19), "leaf1-spine1");
  EXPECT_EQ(LinkEnds(t, 23), "leaf3-spine1");
  EXPECT_EQ(t.graph[t.links[19]].rate_bps, 40e9);
  for (const char* leaf : {"leaf0", "leaf1", "leaf2", "leaf3"}) {
    EXPECT_EQ(boost::out_degree(VertexNamed(t, leaf), t.graph), 6u) << leaf;  // 4 + 2
  }
  for (const char* spine : {"spine0", "spine1"}) {
    EXPECT_EQ(boost::out_degree(VertexNamed(t, spine), t.graph), 4u) << spine;
  }
  EXPECT_THAT(t.description, HasSubstr("leaf-spine 4x2, 4 hosts/leaf"));
}

// Al-Fares: k^3/4 hosts, 5k^2/4 switches (k^2/2 edge + k^2/2 aggregation + k^2/4 core), and
// k^3/4 links in each of the three layers.
TEST(TopoBuilders, FatTreeK4Has16Hosts20Switches48Links) {
  const Topology t = MakeFatTree(4, 10e9, 1e-6);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.hosts.size(), 16u);
  EXPECT_EQ(SwitchCount(t), 20u);
  EXPECT_EQ(t.links.size(), 48u);
  ExpectHostsNamedInOrder(t);
  ExpectDenseLinkIds(t);
  // Host 5: pod 5 / 4 = 1, edge (5 / 2) % 2 = 0.
  EXPECT_EQ(LinkEnds(t, 5), "h5-edge1_0");
  EXPECT_EQ(LinkEnds(t, 15), "h15-edge3_1");
  // Edge-agg links (16..31) then agg-core links (32..47).
  EXPECT_EQ(LinkEnds(t, 16), "edge0_0-agg0_0");
  EXPECT_EQ(LinkEnds(t, 31), "edge3_1-agg3_1");
  EXPECT_EQ(LinkEnds(t, 32), "agg0_0-core0");
  EXPECT_EQ(LinkEnds(t, 35), "agg0_1-core3");
  // Core 2 = aggregation index 2 / 2 = 1 in every pod.
  std::vector<std::string> core2_peers;
  const Vertex core2 = VertexNamed(t, "core2");
  for (auto [e, end] = boost::out_edges(core2, t.graph); e != end; ++e) {
    core2_peers.push_back(t.graph[boost::target(*e, t.graph)].name);
  }
  EXPECT_THAT(core2_peers, ::testing::UnorderedElementsAre("agg0_1", "agg1_1", "agg2_1", "agg3_1"));
  for (Vertex v = 16; v < boost::num_vertices(t.graph); ++v) {
    EXPECT_EQ(t.graph[v].kind, NodeKind::kSwitch);
    EXPECT_EQ(boost::out_degree(v, t.graph), 4u) << t.graph[v].name;  // every switch has k ports
  }
}

TEST(TopoBuilders, FatTreeK8Has128Hosts80Switches384Links) {
  const Topology t = MakeFatTree(8, 100e9, 1e-6);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.hosts.size(), 128u);
  EXPECT_EQ(SwitchCount(t), 80u);
  EXPECT_EQ(t.links.size(), 384u);
  ExpectHostsNamedInOrder(t);
  ExpectDenseLinkIds(t);
  for (Vertex v = 128; v < boost::num_vertices(t.graph); ++v) {
    EXPECT_EQ(boost::out_degree(v, t.graph), 8u) << t.graph[v].name;
  }
  // Host 37: pod 37 / 16 = 2, edge (37 / 4) % 4 = 1.
  EXPECT_EQ(LinkEnds(t, 37), "h37-edge2_1");
  EXPECT_NE(VertexNamed(t, "core15"), 0u);
}

TEST(TopoBuilders, SmallestFatTreeK2) {
  const Topology t = MakeFatTree(2, 1e9, 0);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.hosts.size(), 2u);  // 2^3/4
  EXPECT_EQ(SwitchCount(t), 5u);  // 5*4/4
  EXPECT_EQ(t.links.size(), 6u);
}

TEST(TopoBuilders, SameArgumentsGiveTheSameGraph) {
  const Topology a = MakeFatTree(4, 1e9, 1e-6);
  const Topology b = MakeFatTree(4, 1e9, 1e-6);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (uint32_t i = 0; i < a.links.size(); ++i) EXPECT_EQ(LinkEnds(a, i), LinkEnds(b, i));
  EXPECT_EQ(a.description, b.description);
}

TEST(TopoBuilders, BadArgumentsNameTheArgumentAndRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalidArgument([] { MakeStar(0, 1e9, 0); }, "MakeStar: hosts must be >= 1, got 0");
  ExpectInvalidArgument([] { MakeStar(2, 0, 0); }, "rate_bps must be a finite rate > 0");
  ExpectInvalidArgument([&] { MakeStar(2, nan, 0); }, "rate_bps");
  ExpectInvalidArgument([] { MakeStar(2, 1e9, -1e-6); }, "latency_s must be a finite time >= 0");
  ExpectInvalidArgument([] { MakeLeafSpine(0, 2, 4, 1e9, 1e9, 0); }, "leaves must be >= 1");
  ExpectInvalidArgument([] { MakeLeafSpine(2, 0, 4, 1e9, 1e9, 0); }, "spines must be >= 1");
  ExpectInvalidArgument([] { MakeLeafSpine(2, 2, 0, 1e9, 1e9, 0); }, "hosts_per_leaf must be >= 1");
  ExpectInvalidArgument([] { MakeLeafSpine(2, 2, 4, -1, 1e9, 0); }, "host_rate_bps");
  ExpectInvalidArgument([] { MakeLeafSpine(2, 2, 4, 1e9, 0, 0); }, "fabric_rate_bps");
  ExpectInvalidArgument([&] { MakeLeafSpine(2, 2, 4, 1e9, 1e9, nan); }, "latency_s");
  ExpectInvalidArgument([] { MakeFatTree(3, 1e9, 0); },
                        "MakeFatTree: k must be an even integer >= 2, got 3");
  ExpectInvalidArgument([] { MakeFatTree(0, 1e9, 0); }, "got 0");
  ExpectInvalidArgument([] { MakeFatTree(-2, 1e9, 0); }, "got -2");
  ExpectInvalidArgument([] { MakeFatTree(4, 0, 0); }, "rate_bps");
  // 4096^3 / 4 hosts do not fit an int host index: refused before anything is allocated.
  ExpectInvalidArgument([] { MakeFatTree(4096, 1e9, 0); }, "expected at most");
}

}  // namespace
}  // namespace nbox::topo
