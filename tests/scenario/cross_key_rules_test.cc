// Rules between keys, checked after the file and the overrides. Host counts and derived rates
// are the closed forms of the topologies (leaves x hosts_per_leaf, k^3/4,
// hosts_per_leaf x host_link / (spines x oversubscription)).
#include <gtest/gtest.h>

#include <filesystem>

#include "scenario_test_support.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using testing::LoadError;

const std::string kEmpty = "tests/scenario/fixtures/empty.ini";

TEST(CrossKeyRules, StarNeedsAHostPerRank) {
  EXPECT_EQ(LoadScenario(kEmpty, {"job.world_size=32"}).topology.hosts, 0);  // 0 = enough
  EXPECT_EQ(LoadError(kEmpty, {"topology.hosts=16", "job.world_size=32"}),
            kEmpty +
                ": job.world_size = 32 (--set) needs 32 hosts but topology.kind = star "
                "(default) has topology.hosts = 16 (--set)");
  EXPECT_EQ(LoadError(kEmpty, {"topology.hosts=32", "job.world_size=32"}), "");
}

// A chunk of 1..7 bytes passed the key and failed inside the collectives.
TEST(CrossKeyRules, ChunkIsZeroOrAtLeastOneElementOfTheWidestType) {
  EXPECT_EQ(LoadError(kEmpty, {"collectives.chunk=3"}),
            kEmpty +
                ": collectives.chunk = 3 (--set) must be 0 (no chunking) or at least 8 bytes, one "
                "element of the widest type");
  EXPECT_EQ(LoadError(kEmpty, {"collectives.chunk=0"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"collectives.chunk=8"}), "");
}

TEST(CrossKeyRules, LeafSpineHostsAreLeavesTimesHostsPerLeaf) {
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=leaf-spine", "job.world_size=16"}), "");  // 4x4
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=leaf-spine", "job.world_size=17"}),
            kEmpty +
                ": job.world_size = 17 (--set) needs 17 hosts but topology.kind = "
                "leaf-spine (--set) has 16: topology.leaves = 4 (default) x "
                "topology.hosts_per_leaf = 4 (default)");
}

TEST(CrossKeyRules, FatTreeHostsAreKCubedOverFourAndKIsEven) {
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=fat-tree", "job.world_size=16"}), "");  // 64/4
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=fat-tree", "job.world_size=17"}),
            kEmpty +
                ": job.world_size = 17 (--set) needs 17 hosts but topology.kind = "
                "fat-tree (--set) has 16: k^3/4 with topology.k = 4 (default)");
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=fat-tree", "topology.k=6", "job.world_size=54"}),
            "");  // 216/4
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=fat-tree", "topology.k=5"}),
            kEmpty +
                ": topology.kind = fat-tree (--set) needs an even topology.k, got "
                "topology.k = 5 (--set)");
  // An odd k means nothing for other kinds.
  EXPECT_EQ(LoadError(kEmpty, {"topology.k=5"}), "");
}

TEST(CrossKeyRules, DctcpNeedsEcnAndNamesTheLines) {
  const std::string path = Fixture("dctcp_without_ecn.ini");
  EXPECT_EQ(LoadError(path), path +
                                 ": network.tcp_cc = dctcp (line 2) requires network.ecn = "
                                 "on, got network.ecn = off (default)");
}

// Real ranks run whatever algorithm the emulated ranks do (the settings travel whole).
TEST(CrossKeyRules, RealRanksRunEveryAlgorithm) {
  for (const char* key :
       {"collectives.allreduce=tree", "collectives.allreduce=halving-doubling",
        "collectives.allreduce=direct", "collectives.allreduce=auto",
        "collectives.allgather=direct", "collectives.reducescatter=halving-doubling",
        "collectives.broadcast=tree", "collectives.reduce=tree"}) {
    EXPECT_EQ(LoadError(kEmpty, {"realranks.ranks=0", key}), "") << key;
  }
  EXPECT_EQ(LoadError(kEmpty, {"realranks.ranks=0", "topology.kind=rail", "servers.count=2",
                               "collectives.alltoall=hierarchical"}),
            "");
}

// workload.kind = chakra reads a folder of traces and nothing else of [workload].
TEST(CrossKeyRules, ChakraTracesNeedTheirFolderAndNoOtherWorkloadKey) {
  EXPECT_EQ(LoadError(kEmpty, {"workload.kind=chakra"}),
            kEmpty + ": workload.kind = chakra (--set) requires workload.trace_dir");
  EXPECT_EQ(LoadError(kEmpty, {"workload.kind=chakra", "workload.trace_dir=/no/such/folder"}),
            kEmpty +
                ": workload.trace_dir = /no/such/folder (--set): no such folder "
                "'/no/such/folder'");
  const std::string folder = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(LoadError(kEmpty, {"workload.kind=chakra", "workload.trace_dir=" + folder,
                               "workload.hidden=4096"}),
            kEmpty +
                ": workload.hidden = 4096 (--set) is not used by workload.kind = chakra "
                "(--set)");
  EXPECT_EQ(LoadError(kEmpty, {"workload.kind=chakra", "workload.trace_dir=" + folder}), "");
  // How often the traces run, and their files' prefix, are the scenario's to say: once, and
  // the folder's, unless given.
  EXPECT_EQ(LoadScenario(kEmpty, {"workload.kind=chakra", "workload.trace_dir=" + folder})
                .workload.iterations,
            1);
  EXPECT_EQ(LoadError(kEmpty, {"workload.kind=chakra", "workload.trace_dir=" + folder,
                               "workload.iterations=5", "workload.trace_prefix=astra"}),
            "");
  EXPECT_EQ(LoadError(kEmpty, {"workload.trace_prefix=astra"}),
            kEmpty +
                ": workload.trace_prefix = astra (--set) is not used by workload.kind = ddp "
                "(default)");
  EXPECT_EQ(LoadError(kEmpty, {"workload.trace_dir=" + folder}),
            kEmpty + ": workload.trace_dir = " + folder +
                " (--set) is used only with workload.kind = chakra, got workload.kind = ddp "
                "(default)");
}

// The host runtime runs a real rank's collectives one at a time in issue order.
TEST(CrossKeyRules, RealRanksRunCollectivesInOrderOneAtATime) {
  EXPECT_EQ(LoadError(kEmpty, {"collectives.order=lifo", "collectives.concurrent=4"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"realranks.ranks=0", "collectives.order=lifo"}),
            kEmpty +
                ": collectives.order = lifo (--set) and collectives.concurrent = 1 (default) "
                "cannot run with real ranks (realranks.ranks = 0 (--set)): the host runtime "
                "runs collectives one at a time in issue order (fifo, 1)");
  EXPECT_NE(LoadError(kEmpty, {"realranks.ranks=0", "collectives.concurrent=2"}), "");
}

// Cut-through is modelled on the TCP path's links only (NboxCutThroughChannel).
TEST(CrossKeyRules, CutThroughIsRefusedOnTheRocePath) {
  EXPECT_EQ(LoadError(kEmpty, {"network.switching=cut-through", "network.transport=roce"}),
            kEmpty +
                ": network.switching = cut-through (--set) is not modelled on "
                "network.transport = roce (--set): its switches store and forward");
  EXPECT_EQ(LoadError(kEmpty, {"network.switching=cut-through"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"network.switching=cut-through", "network.model=flow"}), "");
}

// Spraying is modelled by the packet model's switches (RoCE and TCP) and the flow and analytical
// models' shares.
TEST(CrossKeyRules, SprayingRunsOnEveryModelAndTransport) {
  EXPECT_EQ(LoadError(kEmpty, {"network.routing=spray", "network.transport=roce"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"network.routing=spray"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"network.routing=spray", "network.model=flow"}), "");
  EXPECT_EQ(
      LoadError(kEmpty, {"network.routing=spray", "network.transport=roce", "network.model=flow"}),
      "");
  EXPECT_EQ(LoadError(kEmpty, {"network.routing=spray", "network.model=analytical"}), "");
}

TEST(CrossKeyRules, EcnThresholdBelowQueueWhenEcnIsOn) {
  EXPECT_EQ(LoadError(kEmpty, {"network.ecn=on", "network.ecn_threshold=4MB"}),
            kEmpty +
                ": network.ecn_threshold = 4MB (--set) must be below "
                "network.switch_queue = 4MB (default) when network.ecn = on (--set)");
  EXPECT_EQ(LoadError(kEmpty, {"network.ecn=on", "network.ecn_threshold=3999999"}), "");
  EXPECT_EQ(LoadError(kEmpty, {"network.ecn=off", "network.ecn_threshold=4MB"}), "");
}

TEST(CrossKeyRules, QueueHoldsAtLeastOnePacket) {
  EXPECT_EQ(LoadError(kEmpty, {"network.mtu=9000", "network.switch_queue=8999"}),
            kEmpty +
                ": network.switch_queue = 8999 (--set) must hold at least one packet of "
                "network.mtu = 9000 (--set)");
  EXPECT_EQ(LoadError(kEmpty, {"network.mtu=9000", "network.switch_queue=9000"}), "");
}

TEST(CrossKeyRules, OversubscriptionDerivesFabricLink) {
  // 4 hosts x 100 Gb/s under a leaf, 2 spines, 4:1 -> each uplink 4 x 100 / (2 x 4) = 50 Gb/s.
  const Scenario s = LoadScenario(
      kEmpty, {"topology.kind=leaf-spine", "job.world_size=16", "topology.oversubscription=4"});
  EXPECT_EQ(s.topology.fabric_link_bps, 50e9);
  EXPECT_EQ(s.settings.at("topology.fabric_link"), "50Gbps");
  // 3:1 -> 400/6 Gb/s; the settings text reads back to the same rate.
  const Scenario third = LoadScenario(
      kEmpty, {"topology.kind=leaf-spine", "job.world_size=16", "topology.oversubscription=3"});
  EXPECT_DOUBLE_EQ(third.topology.fabric_link_bps, 400e9 / 6);
  EXPECT_EQ(
      LoadScenario(kEmpty, {"topology.fabric_link=" + third.settings.at("topology.fabric_link")})
          .topology.fabric_link_bps,
      third.topology.fabric_link_bps);
}

TEST(CrossKeyRules, OversubscriptionExcludesAnExplicitFabricLink) {
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=leaf-spine", "topology.oversubscription=2",
                               "topology.fabric_link=100Gbps"}),
            kEmpty +
                ": topology.oversubscription = 2 (--set) and topology.fabric_link = "
                "100Gbps (--set) are mutually exclusive: oversubscription sets "
                "fabric_link = hosts_per_leaf x host_link / (spines x oversubscription)");
  // Zero means off, so both may be given.
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=leaf-spine", "topology.oversubscription=0",
                               "topology.fabric_link=40Gbps"}),
            "");
}

TEST(CrossKeyRules, OversubscriptionOnlyForLeafSpine) {
  EXPECT_EQ(LoadError(kEmpty, {"topology.oversubscription=2"}),
            kEmpty +
                ": topology.oversubscription = 2 (--set) applies only to topology.kind = "
                "leaf-spine, got topology.kind = star (default)");
}

TEST(CrossKeyRules, DerivedFabricLinkMustBeInRange) {
  // 1024 x 10 Tb/s / (1 x 0.5) = 20480 Tb/s, above the 10 Tb/s a fabric_link may have.
  const std::string error = LoadError(
      kEmpty, {"topology.kind=leaf-spine", "topology.hosts_per_leaf=1024",
               "topology.host_link=10Tbps", "topology.spines=1", "topology.oversubscription=0.5"});
  EXPECT_EQ(error, kEmpty +
                       ": topology.oversubscription = 0.5 (--set) gives "
                       "topology.fabric_link = 20480Tbps (topology.hosts_per_leaf = 1024 "
                       "(--set) x topology.host_link = 10Tbps (--set) / (topology.spines = "
                       "1 (--set) x topology.oversubscription = 0.5 (--set))), expected a "
                       "rate from 1Mbps to 10Tbps, such as 100Gbps or 25Gb/s");
}

TEST(CrossKeyRules, CustomModelNeedsItsSize) {
  EXPECT_EQ(LoadError(kEmpty, {"workload.model=custom", "workload.parameters=340M"}),
            kEmpty +
                ": workload.model = custom (--set) requires workload.parameters, "
                "workload.layers and workload.flops_per_sample; missing: workload.layers, "
                "workload.flops_per_sample");
  const Scenario s = LoadScenario(kEmpty, {"workload.model=custom", "workload.parameters=340M",
                                           "workload.layers=24", "workload.flops_per_sample=1e11"});
  EXPECT_EQ(s.workload.parameters, 340000000u);
  EXPECT_EQ(s.workload.layers, 24);
  EXPECT_EQ(s.workload.flops_per_sample, 1e11);
}

TEST(CrossKeyRules, ModelMustBeAPresetOrCustom) {
  const std::string error = LoadError(kEmpty, {"workload.model=resnet153"});
  EXPECT_EQ(error.rfind("--set workload.model=resnet153: [workload] model = 'resnet153': "
                        "expected one of ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("custom"), std::string::npos) << error;
  EXPECT_NE(error.find("; did you mean 'resnet152'?"), std::string::npos) << error;
}

TEST(CrossKeyRules, TopologyFileIsResolvedFromTheScenarioFolder) {
  const Scenario s = LoadScenario(Fixture("topology_file.ini"));
  EXPECT_EQ(s.topology.file, "tests/scenario/fixtures/topologies/tiny.topo");
  EXPECT_EQ(s.settings.at("topology.file"), "tests/scenario/fixtures/topologies/tiny.topo");
  // An override is resolved the same way: from the scenario file's folder.
  const Scenario o =
      LoadScenario(kEmpty, {"topology.kind=file", "topology.file=topologies/tiny.topo"});
  EXPECT_EQ(o.topology.file, "tests/scenario/fixtures/topologies/tiny.topo");
  // Absolute paths stay as they are.
  const std::string absolute =
      std::filesystem::absolute("tests/scenario/fixtures/topologies/tiny.topo").string();
  EXPECT_EQ(LoadScenario(kEmpty, {"topology.kind=file", "topology.file=" + absolute}).topology.file,
            absolute);
}

TEST(CrossKeyRules, TopologyFileMustBeGivenAndExist) {
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=file"}),
            kEmpty + ": topology.kind = file (--set) requires topology.file");
  EXPECT_EQ(LoadError(kEmpty, {"topology.kind=file", "topology.file=nope.topo"}),
            kEmpty +
                ": topology.file = nope.topo (--set): no such file "
                "'tests/scenario/fixtures/nope.topo'");
  EXPECT_EQ(LoadError(kEmpty, {"topology.file=topologies/tiny.topo"}),
            kEmpty +
                ": topology.file = topologies/tiny.topo (--set) is used only with "
                "topology.kind = file, got topology.kind = star (default)");
}

TEST(CrossKeyRules, EveryBrokenRuleIsReported) {
  EXPECT_EQ(LoadError(kEmpty, {"network.tcp_cc=dctcp", "topology.oversubscription=2"}),
            kEmpty +
                ": network.tcp_cc = dctcp (--set) requires network.ecn = on, got "
                "network.ecn = off (default)\n" +
                kEmpty +
                ": topology.oversubscription = 2 (--set) applies only to "
                "topology.kind = leaf-spine, got topology.kind = star (default)");
}

}  // namespace
}  // namespace nbox::scenario
