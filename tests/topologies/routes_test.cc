// Equal-cost routes against path counts and hop lengths derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/topologies/test_graphs.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::EqualCostPaths;
using ::nbox::topo::testing::VertexNamed;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every path has `hops` links and only switches between its two ends.
void ExpectPathShape(const Topology& t, const std::vector<std::vector<Vertex>>& paths,
                     size_t hops) {
  for (const auto& path : paths) {
    ASSERT_EQ(path.size(), hops + 1);
    for (size_t i = 1; i + 1 < path.size(); ++i) {
      EXPECT_EQ(t.graph[path[i]].kind, NodeKind::kSwitch) << t.graph[path[i]].name;
    }
  }
}

// The product of the next-hop set sizes met along `path`: the path count when every choice
// leads to the same number of continuations, as in a fat-tree.
size_t ProductOfChoices(const Routes& routes, const std::vector<Vertex>& path, int dst) {
  size_t product = 1;
  for (size_t i = 0; i + 1 < path.size(); ++i) product *= routes.NextLinks(path[i], dst).size();
  return product;
}

// Fat-tree with host index p*(k/2)^2 + e*(k/2) + j: two hosts on one edge switch have 1 path
// of 2 hops; in one pod on different edges k/2 paths (one per aggregation switch) of 4 hops;
// in different pods (k/2)^2 paths (aggregation switch x core) of 6 hops.
void CheckFatTreePaths(int k) {
  const Topology t = MakeFatTree(k, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  const int half = k / 2;
  const int hosts = k * half * half;
  for (int src = 0; src < hosts; ++src) {
    for (int dst = 0; dst < hosts; ++dst) {
      if (src == dst) continue;
      const int src_pod = src / (half * half), dst_pod = dst / (half * half);
      const int src_edge = src / half, dst_edge = dst / half;  // global edge switch index
      size_t expected_paths = 0, expected_hops = 0;
      if (src_edge == dst_edge) {
        expected_paths = 1, expected_hops = 2;
      } else if (src_pod == dst_pod) {
        expected_paths = half, expected_hops = 4;
      } else {
        expected_paths = half * half, expected_hops = 6;
      }
      const auto paths = EqualCostPaths(t, routes, src, dst);
      ASSERT_EQ(paths.size(), expected_paths) << "k=" << k << " h" << src << "->h" << dst;
      ExpectPathShape(t, paths, expected_hops);
      EXPECT_EQ(ProductOfChoices(routes, paths[0], dst), expected_paths);
    }
  }
}

TEST(TopoRoutes, FatTreeK4PathCounts) {
  CheckFatTreePaths(4);
}
TEST(TopoRoutes, FatTreeK8PathCounts) {
  CheckFatTreePaths(8);
}

TEST(TopoRoutes, FatTreeK4NamedExamples) {
  const Topology t = MakeFatTree(4, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  // h0 -> h15 (pod 3): edge0_0 may go up to agg0_0 (link 16) or agg0_1 (link 17).
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "edge0_0"), 15), ElementsAre(16u, 17u));
  // Down from core0 to pod 3 only via agg3_0: agg-core links of pod 3 start at 32 + 3*4.
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "core0"), 15), ElementsAre(44u));
  // edge3_1 delivers to h15 over host link 15; a host's own entry is empty.
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "edge3_1"), 15), ElementsAre(15u));
  EXPECT_THAT(routes.NextLinks(t.hosts[15], 15), IsEmpty());
}

TEST(TopoRoutes, LeafSpineAcrossLeavesHasOnePathPerSpine) {
  const Topology t = MakeLeafSpine(4, 2, 4, 100e9, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  const auto across = EqualCostPaths(t, routes, 0, 4);  // leaf0 -> leaf1
  ASSERT_EQ(across.size(), 2u);
  ExpectPathShape(t, across, 4);
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "leaf0"), 4), ElementsAre(16u, 17u));
  const auto same_leaf = EqualCostPaths(t, routes, 0, 3);
  ASSERT_EQ(same_leaf.size(), 1u);
  ExpectPathShape(t, same_leaf, 2);
}

// Leaf-spine of 4 leaves and 2 spines: with leaf0's link to spine0 (link 16) down, leaf0
// reaches other leaves over spine1 alone, spine0 reaches leaf0's hosts through another leaf and
// spine1 (4 hops), and every other leaf keeps both spines towards other leaves. With a leaf's
// every uplink down, its hosts are cut off from the rest; a host's own link, from everyone.
TEST(TopoRoutes, RoutesAvoidFailedLinks) {
  const Topology t = MakeLeafSpine(4, 2, 4, 100e9, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t, std::vector<uint32_t>{16});
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "leaf0"), 4), ElementsAre(17u));
  const auto around = EqualCostPaths(t, routes, 4, 0);  // h4 on leaf1 -> h0 on leaf0
  ASSERT_EQ(around.size(), 1u);
  ExpectPathShape(t, around, 4);
  EXPECT_EQ(t.graph[around[0][2]].name, "spine1");
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "leaf1"), 8), ElementsAre(18u, 19u));
  const auto spine0_down = EqualCostPaths(t, routes, 8, 4);  // leaf2 -> leaf1: both spines
  EXPECT_EQ(spine0_down.size(), 2u);
  EXPECT_EQ(FindHostsCutOff(t, {16}, {0, 4, 8, 12}), std::nullopt);
  const auto cut = FindHostsCutOff(t, {16, 17}, {0, 4, 8, 12});
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->first, 0u);
  EXPECT_EQ(cut->second, 4u);
  EXPECT_EQ(FindHostsCutOff(t, {5}, {0, 4}), std::nullopt);  // h5's link: h5 is not asked
  EXPECT_TRUE(FindHostsCutOff(t, {5}, {0, 5}).has_value());
}

TEST(TopoRoutes, StarRoutesAreDirect) {
  const Topology t = MakeStar(4, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  const Vertex sw = VertexNamed(t, "sw0");
  ASSERT_EQ(routes.vertex_count(), 5u);
  for (uint32_t dst = 0; dst < 4; ++dst) {
    EXPECT_THAT(routes.NextLinks(sw, dst), ElementsAre(dst));
    for (uint32_t src = 0; src < 4; ++src) {
      if (src == dst) {
        EXPECT_THAT(routes.NextLinks(t.hosts[src], dst), IsEmpty());
      } else {
        EXPECT_THAT(routes.NextLinks(t.hosts[src], dst), ElementsAre(src));
      }
    }
  }
}

// h0 - s0 - h1 - s1 - h2 would be 4 hops through the dual-homed host h1; the switch detour
// h0 - s0 - s2 - s3 - s1 - h2 is 5 hops and the only legal path.
Topology HostShortcutGraph() {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1"), h2 = t.AddHost("h2");
  const Vertex s0 = t.AddSwitch("s0"), s1 = t.AddSwitch("s1");
  const Vertex s2 = t.AddSwitch("s2"), s3 = t.AddSwitch("s3");
  t.AddLink(h0, s0, 1e9, 0);  // 0
  t.AddLink(s0, h1, 1e9, 0);  // 1
  t.AddLink(h1, s1, 1e9, 0);  // 2
  t.AddLink(s1, h2, 1e9, 0);  // 3
  t.AddLink(s0, s2, 1e9, 0);  // 4
  t.AddLink(s2, s3, 1e9, 0);  // 5
  t.AddLink(s3, s1, 1e9, 0);  // 6
  return t;
}

TEST(TopoRoutes, HostsAreNeverTransit) {
  const Topology t = HostShortcutGraph();
  ASSERT_NO_THROW(t.Validate());
  const Routes routes = ComputeEqualCostRoutes(t);
  const auto paths = EqualCostPaths(t, routes, 0, 2);
  ASSERT_EQ(paths.size(), 1u);
  std::vector<std::string> names;
  for (Vertex v : paths[0]) names.push_back(t.graph[v].name);
  EXPECT_THAT(names, ElementsAre("h0", "s0", "s2", "s3", "s1", "h2"));
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "s0"), 2), ElementsAre(4u));
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "s1"), 0), ElementsAre(6u));
  // The dual-homed host itself still uses its own links as an endpoint.
  EXPECT_THAT(routes.NextLinks(t.hosts[1], 0), ElementsAre(1u));
  EXPECT_THAT(routes.NextLinks(t.hosts[1], 2), ElementsAre(2u));
  EXPECT_THAT(routes.NextLinks(VertexNamed(t, "s0"), 1), ElementsAre(1u));
}

// h0 - s0 - s2 - s1 - h2 and h0 - s0 - h1 - s1 - h2 are both 4 hops; only the first is legal.
TEST(TopoRoutes, HostOnAnEquallyShortPathIsNotANextHop) {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1"), h2 = t.AddHost("h2");
  const Vertex s0 = t.AddSwitch("s0"), s1 = t.AddSwitch("s1"), s2 = t.AddSwitch("s2");
  t.AddLink(h0, s0, 1e9, 0);  // 0
  t.AddLink(s0, h1, 1e9, 0);  // 1
  t.AddLink(h1, s1, 1e9, 0);  // 2
  t.AddLink(s1, h2, 1e9, 0);  // 3
  t.AddLink(s0, s2, 1e9, 0);  // 4
  t.AddLink(s2, s1, 1e9, 0);  // 5
  ASSERT_NO_THROW(t.Validate());
  const Routes routes = ComputeEqualCostRoutes(t);
  EXPECT_THAT(routes.NextLinks(s0, 2), ElementsAre(4u));
  EXPECT_THAT(routes.NextLinks(s1, 0), ElementsAre(5u));
  const auto paths = EqualCostPaths(t, routes, 0, 2);
  ASSERT_EQ(paths.size(), 1u);
  ExpectPathShape(t, paths, 4);
}

TEST(TopoRoutes, DirectHostLinkIsUsedAndParallelLinksAreBothListed) {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1"), h2 = t.AddHost("h2");
  const Vertex s0 = t.AddSwitch("s0");
  t.AddLink(h0, s0, 1e9, 0);  // 0
  t.AddLink(h1, s0, 1e9, 0);  // 1
  t.AddLink(h0, h1, 1e9, 0);  // 2: one hop beats two
  t.AddLink(h2, s0, 1e9, 0);  // 3
  t.AddLink(s0, h2, 1e9, 0);  // 4: parallel to 3
  ASSERT_NO_THROW(t.Validate());
  const Routes routes = ComputeEqualCostRoutes(t);
  EXPECT_THAT(routes.NextLinks(h0, 1), ElementsAre(2u));
  EXPECT_THAT(routes.NextLinks(h1, 0), ElementsAre(2u));
  EXPECT_THAT(routes.NextLinks(s0, 2), ElementsAre(3u, 4u));
  EXPECT_THAT(routes.NextLinks(h2, 0), ElementsAre(3u, 4u));
  // h1 -> h2 may not go through h0 even though h0 is also one hop from s0.
  EXPECT_THAT(routes.NextLinks(h1, 2), ElementsAre(1u));
}

}  // namespace
}  // namespace nbox::topo
