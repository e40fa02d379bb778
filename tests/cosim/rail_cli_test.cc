// nbox-cosim on a rail-optimised fabric of NVSwitch servers (tests/cosim/fixtures/rail_tiny.ini,
// 2 servers x 8 GPUs): the scenario keys reach the topology and the communicator. Both the
// server-aware ring and the hierarchical all-reduce leave the spines idle, and the bytes
// between servers (NIC links) stand in the ratio of the closed forms: per all-reduce of B
// bytes the ring's 2 crossings per channel carry 4(W-1)/W B, the hierarchical all-reduce's
// rails 2(S-1)/S B, so hierarchical / ring = (2 * 1/2) / (4 * 15/16) = 8/15 (W = 16, S = 2);
// headers and ACKs scale both alike. A bad [servers] value stops the run with file and line.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

class RailCli : public CliTest {
 protected:
  RailCli() : CliTest("nbox-rail-cli") {}
};

// On both transports: TCP, and RoCE, where the NVLink links are lossless RoCE links through
// the NVSwitch node (PFC instead of NVLink's credit-based flow control).
class RailCliTransport : public RailCli, public ::testing::WithParamInterface<const char*> {};

TEST_P(RailCliTransport, RingAndHierarchicalStayOffTheSpinesAndCrossServersAsTheClosedFormsSay) {
  const std::string scenario =
      std::string("tests/cosim/fixtures/rail_tiny.ini --set network.transport=") + GetParam();
  const auto ring = RunCosim(scenario + " --out " + (dir_ / "ring").string());
  ASSERT_EQ(ring.status, 0) << ring.output;
  EXPECT_NE(ring.output.find("rail, 2 servers x 8 GPUs"), std::string::npos) << ring.output;
  const auto hier = RunCosim(scenario + " --set collectives.allreduce=hierarchical --out " +
                             (dir_ / "hier").string());
  ASSERT_EQ(hier.status, 0) << hier.output;

  const LinkBytes ring_bytes = ReadLinkBytes(dir_ / "ring" / "results.json");
  const LinkBytes hier_bytes = ReadLinkBytes(dir_ / "hier" / "results.json");
  EXPECT_EQ(ring_bytes.spine, 0u);
  EXPECT_EQ(hier_bytes.spine, 0u);
  ASSERT_GT(ring_bytes.nic, 0u);
  EXPECT_NEAR(static_cast<double>(hier_bytes.nic) / ring_bytes.nic, 8.0 / 15, 0.01);
  // Per rank both move 2(W-1)/W B in all (ring) = 2(G-1)/G B + 2(S-1)/S B/G (hierarchical):
  // 30/16 = 28/16 + 2/16 B, so the NVLink links carry the rest of the same total.
  EXPECT_NEAR(static_cast<double>(hier_bytes.nic + hier_bytes.nvlink) /
                  (ring_bytes.nic + ring_bytes.nvlink),
              1.0, 0.01);
}

INSTANTIATE_TEST_SUITE_P(Transports, RailCliTransport, ::testing::Values("tcp", "roce"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST_F(RailCli, BadServerValuesStopTheRunWithFileAndLine) {
  const std::string scenario = "tests/scenario/fixtures/servers_bad_values.ini";
  const auto run = RunCosim(scenario + " --out " + (dir_ / "bad").string());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find(scenario + ":7: [servers] gpus = '0'"), std::string::npos)
      << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

}  // namespace
