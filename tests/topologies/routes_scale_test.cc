// Routes of large topologies against an independent brute force, and the compact storage.
//
// The brute force searches forward from the source host (where ComputeEqualCostRoutes
// searches backwards from each destination) and counts the shortest legal paths (inner
// vertices all switches) link by link. The routes describe exactly those paths when every
// path they allow is legal and that short, and they allow as many paths as the brute force
// counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tests/topologies/test_graphs.h"
#include "topologies/servers.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::OtherEnd;
using ::nbox::topo::testing::VertexNamed;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct ForwardSearch {
  std::vector<int> hops;         // from the source; -1 when not reached
  std::vector<uint64_t> counts;  // shortest legal paths from the source, link by link
};

ForwardSearch SearchFrom(const Topology& t, Vertex source) {
  const auto n = boost::num_vertices(t.graph);
  ForwardSearch s{std::vector<int>(n, -1), std::vector<uint64_t>(n, 0)};
  std::vector<Vertex> queue{source};
  s.hops[source] = 0;
  s.counts[source] = 1;
  for (size_t next = 0; next < queue.size(); ++next) {
    const Vertex u = queue[next];
    if (u != source && t.graph[u].kind == NodeKind::kHost) continue;  // hosts do not forward
    for (auto [e, end] = boost::out_edges(u, t.graph); e != end; ++e) {
      const Vertex w = boost::target(*e, t.graph);
      if (s.hops[w] == -1) {
        s.hops[w] = s.hops[u] + 1;
        queue.push_back(w);
      }
      if (s.hops[w] == s.hops[u] + 1) s.counts[w] += s.counts[u];
    }
  }
  return s;
}

// Walks every path the routes allow from `v` to host index `dst`: checks that each is legal,
// that it has exactly `hops_left` more links, and returns how many there are.
uint64_t CountRoutedPaths(const Topology& t, const Routes& routes, Vertex v, size_t dst,
                          int hops_left, std::map<Vertex, uint64_t>& memo) {
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  uint64_t paths = 0;
  const auto& links = routes.NextLinks(v, dst);
  EXPECT_FALSE(links.empty()) << t.graph[v].name << " has no way to host " << dst;
  EXPECT_TRUE(std::is_sorted(links.begin(), links.end()));
  for (uint32_t link : links) {
    const Vertex w = OtherEnd(t, link, v);
    if (w == t.hosts[dst]) {
      EXPECT_EQ(hops_left, 1) << "a path of the wrong length";
      ++paths;
    } else if (t.graph[w].kind != NodeKind::kSwitch) {
      ADD_FAILURE() << "link " << link << " from " << t.graph[v].name << " leads through host "
                    << t.graph[w].name;
    } else if (hops_left > 1) {
      paths += CountRoutedPaths(t, routes, w, dst, hops_left - 1, memo);
    } else {
      ADD_FAILURE() << "a path longer than the shortest, at " << t.graph[w].name;
    }
  }
  memo.emplace(v, paths);
  return paths;
}

// Checks `pairs` random (source, destination) host pairs, drawn with a fixed seed.
void ExpectRoutesMatchBruteForce(const Topology& t, int pairs) {
  ASSERT_NO_THROW(t.Validate());
  const Routes routes = ComputeEqualCostRoutes(t);
  ASSERT_EQ(routes.vertex_count(), boost::num_vertices(t.graph));
  ASSERT_EQ(routes.host_count(), t.hosts.size());
  std::mt19937 draw(12345);
  for (int i = 0; i < pairs; ++i) {
    const size_t src = draw() % t.hosts.size(), dst = draw() % t.hosts.size();
    const ForwardSearch search = SearchFrom(t, t.hosts[src]);
    if (src == dst) {
      EXPECT_TRUE(routes.NextLinks(t.hosts[src], dst).empty());
      continue;
    }
    const int hops = search.hops[t.hosts[dst]];
    ASSERT_GT(hops, 0);
    std::map<Vertex, uint64_t> memo;
    EXPECT_EQ(CountRoutedPaths(t, routes, t.hosts[src], dst, hops, memo),
              search.counts[t.hosts[dst]])
        << "h" << src << " -> h" << dst;
  }
}

TEST(TopoRoutesScale, FatTreeK16AgreesWithBruteForce) {
  ExpectRoutesMatchBruteForce(MakeFatTree(16, 100e9, 1e-6), 300);
}

TEST(TopoRoutesScale, LeafSpine32x16AgreesWithBruteForce) {
  ExpectRoutesMatchBruteForce(MakeLeafSpine(32, 16, 32, 100e9, 100e9, 1e-6), 300);
}

// 512 hosts on 16 leaves and 4 spines, with two parallel links from every leaf to every
// spine. Host i links to both leaves of its pair (64 hosts per pair of leaves), except that
// every 32nd host from i = 8 on takes its second link to a leaf of the next pair instead, so
// that leaf -> host -> leaf is as short as leaf -> spine -> leaf; and every 16th host also
// links straight to the next host; every 4th host from i = 3 on has only its first link.
// Multi-homed and single-homed hosts on one switch, parallel links, host-to-host links and
// hosts on equally short paths, at scale.
Topology DualHomedFabric() {
  Topology t;
  constexpr int kHosts = 512, kLeaves = 16, kSpines = 4;
  std::vector<Vertex> hosts, leaves, spines;
  for (int i = 0; i < kHosts; ++i) hosts.push_back(t.AddHost("h" + std::to_string(i)));
  for (int i = 0; i < kLeaves; ++i) leaves.push_back(t.AddSwitch("leaf" + std::to_string(i)));
  for (int i = 0; i < kSpines; ++i) spines.push_back(t.AddSwitch("spine" + std::to_string(i)));
  const int hosts_per_pair = kHosts / (kLeaves / 2);
  for (int i = 0; i < kHosts; ++i) {
    const int pair = i / hosts_per_pair;
    t.AddLink(hosts[i], leaves[2 * pair], 100e9, 1e-6);
    const int second_leaf = i % 32 == 8 ? (2 * pair + 2) % kLeaves : 2 * pair + 1;
    if (i % 4 != 3) t.AddLink(hosts[i], leaves[second_leaf], 100e9, 1e-6);
    if (i % 16 == 0) t.AddLink(hosts[i], hosts[i + 1], 100e9, 1e-6);
  }
  for (Vertex leaf : leaves) {
    for (Vertex spine : spines) {
      t.AddLink(leaf, spine, 400e9, 1e-6);
      t.AddLink(leaf, spine, 400e9, 1e-6);
    }
  }
  return t;
}

TEST(TopoRoutesScale, DualHomedFabricAgreesWithBruteForce) {
  ExpectRoutesMatchBruteForce(DualHomedFabric(), 300);
}

// Hosts of more links than a host derives its routes from (Routes::kMaxDerivedLinks) keep a
// row of their own: host 0 links to all 10 leaves and straight to host 1, host 2 to all 10;
// every other host has one leaf. Their rows come from the switches a search reaches and from
// the destination itself when it is a neighbour.
TEST(TopoRoutesScale, HostsOfManyLinksAgreeWithBruteForce) {
  Topology t;
  constexpr int kHosts = 60, kLeaves = 10, kSpines = 3;
  std::vector<Vertex> hosts, leaves;
  for (int i = 0; i < kHosts; ++i) hosts.push_back(t.AddHost("h" + std::to_string(i)));
  for (int i = 0; i < kLeaves; ++i) leaves.push_back(t.AddSwitch("leaf" + std::to_string(i)));
  for (int i = 0; i < kSpines; ++i) {
    const Vertex spine = t.AddSwitch("spine" + std::to_string(i));
    for (Vertex leaf : leaves) t.AddLink(leaf, spine, 400e9, 1e-6);
  }
  for (int i = 0; i < kHosts; ++i) {
    if (i == 0 || i == 2) {
      for (Vertex leaf : leaves) t.AddLink(hosts[i], leaf, 100e9, 1e-6);
    } else {
      t.AddLink(hosts[i], leaves[i % kLeaves], 100e9, 1e-6);
    }
  }
  t.AddLink(hosts[0], hosts[1], 100e9, 1e-6);
  EXPECT_EQ(CountRouteRows(t), 2u + kLeaves + kSpines);
  ExpectRoutesMatchBruteForce(t, 400);
  const Routes routes = ComputeEqualCostRoutes(t);
  // Host 0 reaches host 1 over their own link, host 2 (on every leaf) over all ten leaves.
  EXPECT_EQ(routes.NextLinks(hosts[0], 1).size(), 1u);
  EXPECT_EQ(routes.NextLinks(hosts[0], 2).size(), static_cast<size_t>(kLeaves));
}

TEST(TopoRoutesScale, DualHomedFabricPathCountByHand) {
  const Topology t = DualHomedFabric();
  const Routes routes = ComputeEqualCostRoutes(t);
  // h0 (leaves 0, 1) -> h100 (leaves 2, 3): up one of 2 host links, one of 4 spines x 2
  // parallel links, down one of 2 leaves x 2 parallel links, then the host link.
  std::map<Vertex, uint64_t> memo;
  EXPECT_EQ(CountRoutedPaths(t, routes, t.hosts[0], 100, 4, memo), 2u * 4 * 2 * 2 * 2);
  // h0 -> h1: the direct link (id 2, after h0's two leaf links) beats both leaves.
  EXPECT_THAT(routes.NextLinks(t.hosts[0], 1), ElementsAre(2u));
  EXPECT_EQ(routes.OnlyLink(t.hosts[0]), std::nullopt);  // several links: a table of its own
}

// Two separate stars: a host with one link still has no way to a host it cannot reach.
TEST(TopoRoutesScale, UnreachableHostsHaveNoNextLinks) {
  Topology t;
  const Vertex h0 = t.AddHost("h0"), h1 = t.AddHost("h1"), h2 = t.AddHost("h2");
  const Vertex h3 = t.AddHost("h3"), s0 = t.AddSwitch("s0"), s1 = t.AddSwitch("s1");
  t.AddLink(h0, s0, 1e9, 0);  // 0
  t.AddLink(h1, s0, 1e9, 0);  // 1
  t.AddLink(h2, s1, 1e9, 0);  // 2
  t.AddLink(h3, s1, 1e9, 0);  // 3
  const Routes routes = ComputeEqualCostRoutes(t);
  EXPECT_THAT(routes.NextLinks(h0, 1), ElementsAre(0u));
  EXPECT_THAT(routes.NextLinks(h0, 2), IsEmpty());
  EXPECT_THAT(routes.NextLinks(s0, 3), IsEmpty());
  EXPECT_THAT(routes.NextLinks(h3, 2), ElementsAre(3u));
  EXPECT_THAT(routes.NextLinks(h3, 0), IsEmpty());
}

TEST(TopoRoutesScale, StarOf5000HostsStoresOneRow) {
  const Topology t = MakeStar(5000, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  const Vertex sw = 5000;
  ASSERT_EQ(t.graph[sw].name, "sw0");
  // Hosts have one link each and keep no table; the switch keeps one set id per host.
  for (size_t h : {0, 1234, 4999}) {
    EXPECT_EQ(routes.OnlyLink(t.hosts[h]), std::optional<uint32_t>(h));
    EXPECT_THAT(routes.NextLinks(sw, h), ElementsAre(h));
    EXPECT_THAT(routes.NextLinks(t.hosts[(h + 1) % 5000], h), ElementsAre((h + 1) % 5000));
  }
  EXPECT_EQ(routes.OnlyLink(sw), std::nullopt);
  // Sets: the empty one and {link i} for each i. Tables: one row of 5000 ids (20 kB) and a
  // fixed entry per vertex; the former per-vertex-per-host lists took about 1 GB here.
  EXPECT_EQ(routes.set_count(), 5001u);
  EXPECT_LT(routes.MemoryBytes(), 1u << 20);
}

// GPUs of a rail fabric have two links (NVLink, NIC): their next links come from their
// neighbouring switches' hop counts rather than rows of their own. Against the brute force,
// and sized: 64 servers of 8 GPUs, 8 rails, 4 spines: 64 + 8 + 4 = 76 switches keep rows of
// 512 set ids and hop counts (6 bytes each, 233 KB); a row per GPU as well would take 1.8 MB.
TEST(TopoRoutesScale, RailGpusDeriveTheirRoutesFromTheSwitches) {
  ServerSpec server;
  server.gpus = 8;
  server.nvlink_rate_bps = 3.6e12;
  server.nic_rate_bps = 400e9;
  const Topology t = MakeRail(64, server, 4, 400e9, 1e-6);
  ExpectRoutesMatchBruteForce(t, 300);
  EXPECT_EQ(CountRouteRows(t), 76u);
  const Routes routes = ComputeEqualCostRoutes(t);
  EXPECT_LT(routes.MemoryBytes(), 76u * 512 * 6 + (200u << 10));
  // GPU 0 of server 0 (NVLink 0, NIC 512): to GPU 1 of its server over NVLink only, to GPU 0
  // of server 1 over its NIC only (its rail, one hop from that GPU).
  EXPECT_THAT(routes.NextLinks(t.hosts[0], 1), ElementsAre(0u));
  EXPECT_THAT(routes.NextLinks(t.hosts[0], 8), ElementsAre(512u));
  EXPECT_EQ(routes.OnlyLink(t.hosts[0]), std::nullopt);
}

TEST(TopoRoutesScale, EqualSetsShareOneId) {
  const Topology t = MakeFatTree(8, 100e9, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  std::map<std::vector<uint32_t>, uint32_t> id_of_set;
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v) {
    for (size_t h = 0; h < t.hosts.size(); ++h) {
      const uint32_t id = routes.SetId(v, h);
      ASSERT_EQ(routes.Set(id), routes.NextLinks(v, h));
      auto [it, inserted] = id_of_set.emplace(routes.NextLinks(v, h), id);
      EXPECT_EQ(it->second, id) << "one set, two ids";
    }
  }
  EXPECT_EQ(id_of_set.size(), routes.set_count()) << "an id that no route uses";
  EXPECT_TRUE(routes.Set(Routes::kEmptySet).empty());
  // Fat-tree host i has the single link i; switches keep a table.
  EXPECT_EQ(routes.OnlyLink(t.hosts[5]), std::optional<uint32_t>(5u));
  EXPECT_EQ(routes.OnlyLink(VertexNamed(t, "edge0_0")), std::nullopt);
}

}  // namespace
}  // namespace nbox::topo
