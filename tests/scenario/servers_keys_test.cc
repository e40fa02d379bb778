// [servers], topology.kind = rail and collectives.allreduce = hierarchical: presets fill the
// server keys not given, custom needs them all, ranks must fill whole servers, hierarchical
// needs servers, and bad values are reported with file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario_test_support.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using ::testing::HasSubstr;
using testing::LoadError;

const std::string kEmpty = "tests/scenario/fixtures/empty.ini";

TEST(ServersKeys, RailTakesTheH100PresetByDefault) {
  const Scenario s = LoadScenario(kEmpty, {"topology.kind=rail", "job.world_size=16"});
  EXPECT_EQ(s.servers.preset, "h100");
  EXPECT_EQ(s.servers.count, 2);
  EXPECT_EQ(s.servers.gpus, 8);
  // NCCL's data rate of 18 NVLinks of 20.6 GB/s (topologies/README.md, "Presets").
  EXPECT_DOUBLE_EQ(s.servers.nvlink_bps, 18 * 20.6e9 * 8);
  EXPECT_DOUBLE_EQ(s.servers.nic_bps, 400e9);
  EXPECT_EQ(s.settings.at("servers.nvlink"), "2.9664Tbps");
  EXPECT_EQ(s.settings.at("servers.nic"), "400Gbps");
}

TEST(ServersKeys, APresetFillsOnlyTheKeysNotGiven) {
  const Scenario s = LoadScenario(kEmpty, {"topology.kind=rail", "servers.preset=a100",
                                           "servers.nic=100Gbps", "job.world_size=8"});
  EXPECT_DOUBLE_EQ(s.servers.nvlink_bps, 12 * 20e9 * 8);  // A100: 12 NVLinks of 20 GB/s
  EXPECT_DOUBLE_EQ(s.servers.nic_bps, 100e9);
  EXPECT_EQ(s.servers.gpus, 8);
}

TEST(ServersKeys, CustomNeedsEveryServerKey) {
  EXPECT_THAT(LoadError(kEmpty, {"topology.kind=rail", "servers.preset=custom", "servers.gpus=4",
                                 "job.world_size=8"}),
              HasSubstr("servers.preset = custom (--set) requires servers.gpus, servers.nvlink "
                        "and servers.nic; missing: servers.nvlink, servers.nic"));
  const Scenario s =
      LoadScenario(kEmpty, {"topology.kind=rail", "servers.preset=custom", "servers.gpus=4",
                            "servers.nvlink=1Tbps", "servers.nic=100Gbps", "job.world_size=8"});
  EXPECT_EQ(s.servers.gpus, 4);
  EXPECT_DOUBLE_EQ(s.servers.nvlink_bps, 1e12);
}

TEST(ServersKeys, RanksFillWholeServersThatExist) {
  EXPECT_THAT(LoadError(kEmpty, {"topology.kind=rail", "job.world_size=12"}),
              HasSubstr("job.world_size = 12 (--set) must be a multiple of servers.gpus = 8 "
                        "(default)"));
  EXPECT_THAT(LoadError(kEmpty, {"topology.kind=rail", "job.world_size=24"}),
              HasSubstr("job.world_size = 24 (--set) needs 24 GPUs but topology.kind = rail "
                        "(--set) has 16: servers.count = 2 (default) x servers.gpus = 8"));
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=rail", "job.world_size=16"}), "");
}

TEST(ServersKeys, HierarchicalNeedsServers) {
  EXPECT_THAT(LoadError(kEmpty, {"collectives.allreduce=hierarchical"}),
              HasSubstr("collectives.allreduce = hierarchical (--set) needs servers: "
                        "topology.kind = rail, got topology.kind = star (default)"));
  EXPECT_EQ(LoadError(kEmpty, {"collectives.allreduce=hierarchical", "topology.kind=rail",
                               "job.world_size=16"}),
            "");
}

TEST(ServersKeys, BadValuesNameFileLineKeyAndExpectation) {
  const std::string path = Fixture("servers_bad_values.ini");
  const std::string error = LoadError(path);
  EXPECT_THAT(error, HasSubstr(path + ":6: [servers] preset = 'h1000': expected one of h100, "
                                      "a100, b200, custom; did you mean 'h100'?"));
  EXPECT_THAT(error, HasSubstr(path + ":7: [servers] gpus = '0': expected a whole number from 1 "
                                      "to 576"));
  EXPECT_THAT(error, HasSubstr(path + ":8: [servers] nvlink = '450GB/s': expected a rate"));
  EXPECT_THAT(error, HasSubstr(path + ":9: [servers] nic = 'fast': expected a rate"));
  EXPECT_THAT(
      error,
      HasSubstr(path +
                ":12: [collectives] allreduce = 'hierarchal': expected "
                "one of ring, hierarchical, direct, halving-doubling, tree, auto; did you mean "
                "'hierarchical'?"));
}

}  // namespace
}  // namespace nbox::scenario
