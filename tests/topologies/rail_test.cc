// MakeRail and the server presets: sizes, names and wiring against the layout servers.h
// documents, and the routes a rail fabric must have (NVLink inside a server, one rail between
// GPUs of the same local index, a spine only between different local indices).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "tests/topologies/test_graphs.h"
#include "topologies/servers.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::EqualCostPaths;
using ::nbox::topo::testing::LinkEnds;
using ::nbox::topo::testing::VertexNamed;
using ::testing::HasSubstr;

constexpr double kNvlink = 3.6e12;
constexpr double kNic = 400e9;
constexpr double kFabric = 800e9;

ServerSpec Server(int gpus) {
  ServerSpec spec;
  spec.gpus = gpus;
  spec.nvlink_rate_bps = kNvlink;
  spec.nvlink_latency_s = 0.5e-6;
  spec.nic_rate_bps = kNic;
  return spec;
}

std::vector<std::string> Names(const Topology& t, const std::vector<Vertex>& path) {
  std::vector<std::string> names;
  for (Vertex v : path) names.push_back(t.graph[v].name);
  return names;
}

TEST(TopoRail, SizesNamesAndLinkOrder) {
  const int servers = 3, gpus = 4, spines = 2;
  const Topology t = MakeRail(servers, Server(gpus), spines, kFabric, 1e-6);
  EXPECT_NO_THROW(t.Validate());
  ASSERT_EQ(t.hosts.size(), 12u);
  EXPECT_EQ(boost::num_vertices(t.graph), 12u + 3 + 4 + 2);
  ASSERT_EQ(t.links.size(), 2u * 12 + 4 * 2);
  for (int s = 0; s < servers; ++s) {
    for (int g = 0; g < gpus; ++g) {
      const int h = s * gpus + g;
      const std::string gpu = "s" + std::to_string(s) + "g" + std::to_string(g);
      EXPECT_EQ(t.graph[t.hosts[h]].name, gpu);
      EXPECT_EQ(t.graph[t.hosts[h]].kind, NodeKind::kHost);
      EXPECT_EQ(LinkEnds(t, h), gpu + "-nvsw" + std::to_string(s));
      EXPECT_EQ(t.graph[t.links[h]].rate_bps, kNvlink);
      EXPECT_EQ(t.graph[t.links[h]].latency_s, 0.5e-6);
      EXPECT_EQ(LinkEnds(t, 12 + h), gpu + "-rail" + std::to_string(g));
      EXPECT_EQ(t.graph[t.links[12 + h]].rate_bps, kNic);
      EXPECT_EQ(t.graph[t.links[12 + h]].latency_s, 1e-6);
    }
  }
  for (int k = 0; k < gpus; ++k) {
    for (int m = 0; m < spines; ++m) {
      const uint32_t id = 24 + k * spines + m;
      EXPECT_EQ(LinkEnds(t, id), "rail" + std::to_string(k) + "-spine" + std::to_string(m));
      EXPECT_EQ(t.graph[t.links[id]].rate_bps, kFabric);
    }
  }
  EXPECT_EQ(t.graph[VertexNamed(t, "nvsw2")].kind, NodeKind::kSwitch);
  EXPECT_THAT(t.description, HasSubstr("rail, 3 servers x 4 GPUs"));
}

// Every GPU pair: inside a server the only shortest path is GPU-nvsw-GPU; across servers with
// the same local index, GPU-rail-GPU; otherwise GPU-rail-spine-rail-GPU once per spine.
TEST(TopoRail, RoutesKeepServersOnNvlinkAndRailsOnTheirRail) {
  const int servers = 2, gpus = 4, spines = 3;
  const Topology t = MakeRail(servers, Server(gpus), spines, kFabric, 1e-6);
  const Routes routes = ComputeEqualCostRoutes(t);
  for (int a = 0; a < servers * gpus; ++a) {
    for (int b = 0; b < servers * gpus; ++b) {
      if (a == b) continue;
      const auto paths = EqualCostPaths(t, routes, a, b);
      const std::string from = t.graph[t.hosts[a]].name;
      const std::string to = t.graph[t.hosts[b]].name;
      const int sa = a / gpus, sb = b / gpus, ga = a % gpus, gb = b % gpus;
      if (sa == sb) {
        ASSERT_EQ(paths.size(), 1u) << from << "->" << to;
        EXPECT_EQ(Names(t, paths[0]),
                  (std::vector<std::string>{from, "nvsw" + std::to_string(sa), to}));
      } else if (ga == gb) {
        ASSERT_EQ(paths.size(), 1u) << from << "->" << to;
        EXPECT_EQ(Names(t, paths[0]),
                  (std::vector<std::string>{from, "rail" + std::to_string(ga), to}));
      } else {
        ASSERT_EQ(paths.size(), static_cast<size_t>(spines)) << from << "->" << to;
        std::set<std::string> via;
        for (const auto& path : paths) {
          const auto names = Names(t, path);
          ASSERT_EQ(names.size(), 5u);
          EXPECT_EQ(names[1], "rail" + std::to_string(ga));
          EXPECT_EQ(names[3], "rail" + std::to_string(gb));
          via.insert(names[2]);
        }
        EXPECT_EQ(via, (std::set<std::string>{"spine0", "spine1", "spine2"}));
      }
    }
  }
}

TEST(TopoRail, RejectsBadArguments) {
  auto expect = [](auto make, const std::string& part) {
    try {
      make();
      ADD_FAILURE() << "expected std::invalid_argument mentioning " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(part));
    }
  };
  expect([] { MakeRail(0, Server(8), 1, kFabric, 1e-6); }, "MakeRail: servers must be >= 1");
  expect([] { MakeRail(2, Server(0), 1, kFabric, 1e-6); }, "server.gpus must be >= 1, got 0");
  expect([] { MakeRail(2, Server(8), 0, kFabric, 1e-6); }, "spines must be >= 1");
  ServerSpec no_nic = Server(8);
  no_nic.nic_rate_bps = 0;
  expect([&] { MakeRail(2, no_nic, 1, kFabric, 1e-6); }, "server.nic_rate_bps must be a finite");
  ServerSpec bad_latency = Server(8);
  bad_latency.nvlink_latency_s = -1;
  expect([&] { MakeRail(2, bad_latency, 1, kFabric, 1e-6); }, "server.nvlink_latency_s");
  expect([] { MakeRail(2, Server(8), 1, kFabric, -1e-6); }, "latency_s must be a finite");
}

// NVIDIA's datasheets quote NVLink per GPU as both directions together: H100 900 GB/s, A100
// 600 GB/s, B200 1.8 TB/s; a link's rate is per direction, in bits/s.
TEST(TopoRail, PresetsHoldTheDatasheetNumbersPerDirection) {
  const ServerPreset* h100 = FindServerPreset("h100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->gpus, 8);
  EXPECT_EQ(h100->nvlink_links, 18);
  EXPECT_DOUBLE_EQ(h100->nvlink_line_rate_bps, 450e9 * 8);
  EXPECT_DOUBLE_EQ(h100->nic_rate_bps, 400e9);
  const ServerPreset* a100 = FindServerPreset("a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->nvlink_links, 12);
  EXPECT_DOUBLE_EQ(a100->nvlink_line_rate_bps, 300e9 * 8);
  EXPECT_DOUBLE_EQ(a100->nic_rate_bps, 200e9);
  const ServerPreset* b200 = FindServerPreset("b200");
  ASSERT_NE(b200, nullptr);
  EXPECT_EQ(b200->nvlink_links, 18);
  EXPECT_DOUBLE_EQ(b200->nvlink_line_rate_bps, 900e9 * 8);
  EXPECT_EQ(FindServerPreset("h200x"), nullptr);
  EXPECT_EQ(ServerPresetNames(), (std::vector<std::string>{"h100", "a100", "b200"}));
  for (const ServerPreset& preset : ServerPresets()) EXPECT_FALSE(preset.source.empty());
}

// The rate NVLink data moves at is NCCL's: 20.6 GB/s a link on Hopper, 20 on Ampere, 40 on
// Blackwell (src/graph/topo.h), times the links. NCCL's maintainers quote the H100's as "an
// effective NVLink bandwidth of 370GB/s" of the 450 GB/s line rate, the bus bandwidth of a
// ring collective on one DGX H100 (NVIDIA/nccl-tests#212), and "close to 240 GB/s" for
// NVLink-connected A100s (NVIDIA/nccl#1712).
TEST(TopoRail, PresetsMoveDataAtNcclsNvlinkRate) {
  const ServerPreset* h100 = FindServerPreset("h100");
  const ServerPreset* a100 = FindServerPreset("a100");
  const ServerPreset* b200 = FindServerPreset("b200");
  ASSERT_TRUE(h100 && a100 && b200);
  EXPECT_NEAR(h100->nvlink_rate_bps / 8e9, 370, 370 * 0.01);
  EXPECT_NEAR(a100->nvlink_rate_bps / 8e9, 240, 240 * 0.01);
  EXPECT_DOUBLE_EQ(b200->nvlink_rate_bps, 18 * 40e9 * 8);
  for (const ServerPreset& preset : ServerPresets()) {
    const double share = preset.nvlink_rate_bps / preset.nvlink_line_rate_bps;
    EXPECT_GT(share, 0.79) << preset.name;
    EXPECT_LT(share, 0.83) << preset.name;
  }
}

}  // namespace
}  // namespace nbox::topo
