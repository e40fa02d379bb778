// collectives.protocol through nbox-cosim: what NCCL's protocols (collectives/protocol.h) add
// to a collective, on every network model alike. The job: one 4 KiB ring all-reduce of 8 GPUs,
// one per host on a 100 Gb/s star, one channel, nothing else to wait for.
#include <gtest/gtest.h>

#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

const std::string kOneAllReduce =
    "tests/cosim/fixtures/tiny.ini --set job.world_size=8 --set workload.model=custom "
    "--set workload.parameters=1024 --set workload.layers=1 --set workload.flops_per_sample=1 "
    "--set workload.batch_per_rank=1 --set workload.iterations=1 --set output.trace=none "
    "--set collectives.channels=1 --set output.progress=off";

class Protocols : public CliTest, public ::testing::WithParamInterface<const char*> {
 protected:
  Protocols() : CliTest("nbox-protocols") {}

  // The iteration's time with `protocol` on this case's network model.
  double IterationSeconds(const std::string& protocol) {
    const fs::path out = dir_ / protocol;
    const auto run = RunCosim(kOneAllReduce + " --set network.model=" + GetParam() +
                              " --set collectives.protocol=" + protocol + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    // The report says which protocol ran where it is not the default (auto).
    EXPECT_EQ(run.output.find("protocol " + protocol) != std::string::npos, protocol != "auto")
        << run.output;
    return ReadJson(out / "results.json").at("iterations").at(0).at("time_s").get<double>();
  }
};

// Simple: the kernel's 8.4 us once, then each of the ring's 2 (8 - 1) = 14 hops, all between
// hosts, 14.0 us (NCCL 2.20's baseLat and hwLat): 204.4 us more than the ideal protocol's, and
// the same bytes. LL: 6.6 + 14 x 2.7 = 44.4 us of latency and four times the bytes on the links
// (a quarter of their rate): its latency and at least three more times the ideal protocol's
// 14 x 512 bytes at 100 Gb/s (1.7 us), but less than Simple's.
TEST_P(Protocols, SimpleAddsNcclsLatenciesAndLlItsSlowerPace) {
  const double ideal = IterationSeconds("ideal");
  const double simple = IterationSeconds("simple");
  const double ll = IterationSeconds("ll");
  EXPECT_NEAR((simple - ideal) * 1e6, 204.4, 0.1);
  EXPECT_GT((ll - ideal) * 1e6, 44.4 + 1.7);
  EXPECT_LT(ll, simple);
}

// The payload is what the programs sent, whatever the protocol: LL puts four times the bytes on
// the links (its flags and pace), which the links' counters show and the payload does not (the
// message-level models charge them per message, the analytical model per collective).
TEST_P(Protocols, ThePayloadLeavesTheProtocolsFlagsOut) {
  auto network = [this](const std::string& protocol) {
    const fs::path out = dir_ / ("payload-" + protocol);
    const auto run = RunCosim(kOneAllReduce + " --set network.model=" + GetParam() +
                              " --set collectives.protocol=" + protocol + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    return ReadJson(out / "results.json").at("network");
  };
  const auto ideal = network("ideal");
  const auto ll = network("ll");
  EXPECT_EQ(ll.at("payload_bytes_sent"), ideal.at("payload_bytes_sent"));
  EXPECT_EQ(ll.at("payload_bytes_delivered"), ideal.at("payload_bytes_delivered"));
  EXPECT_GT(ll.at("wire_bytes").get<double>(), 3 * ideal.at("wire_bytes").get<double>());
}

INSTANTIATE_TEST_SUITE_P(EveryModel, Protocols, ::testing::Values("packet", "flow", "analytical"));

class AllToAllProtocol : public CliTest {
 protected:
  AllToAllProtocol() : CliTest("nbox-alltoall-protocol") {}
};

// An all-to-all runs NCCL's point-to-point protocol: LL for messages of up to
// NCCL_P2P_LL_THRESHOLD (16 KiB), else Simple. An MoE's dispatch and combine are all-to-all-v
// (their size 0, the sizes in their matrix): they go by their mean message. With hidden 512, a
// rank of the t = 2 (sequence-parallel) job sends its 256 tokens x top-2 x 512 x 2 bytes = 512
// KiB, 64 KiB to each of 8 peers: Simple (they once took LL by their size of 0, four times the
// bytes on the links); with hidden 32, 4 KiB a peer: LL.
TEST_F(AllToAllProtocol, AllToAllVGoesByItsMeanMessage) {
  for (const int hidden : {512, 32}) {
    const fs::path out = dir_ / std::to_string(hidden);
    const auto run = RunCosim(
        "tests/cosim/fixtures/moe_rail.ini --set network.model=flow "
        "--set collectives.protocol=auto --set workload.hidden=" +
        std::to_string(hidden) + " --set output.trace=none --out " + out.string());
    ASSERT_EQ(run.status, 0) << run.output;
    int checked = 0;
    const auto results = ReadJson(out / "results.json");
    for (const auto& c : results.at("collectives")) {
      if (c.at("op") != "AllToAllV") continue;
      ++checked;
      const uint64_t per_peer = c.at("bytes").get<uint64_t>() / c.at("ranks").get<uint64_t>();
      EXPECT_EQ(c.at("protocol"), per_peer <= 16384 ? "LL" : "Simple") << c.dump();
      EXPECT_EQ(c.at("protocol"), hidden == 512 ? "Simple" : "LL") << c.dump();
    }
    EXPECT_GT(checked, 0);
  }
}

class ProtocolOrder : public CliTest {
 protected:
  ProtocolOrder() : CliTest("nbox-protocol-order") {}
};

// A receiver matches the n-th message of a connection to its n-th receive, so a protocol's
// latencies may delay sends but never let one overtake another on its connection. In this job
// they once did (a send that waited on no other step paid the base latency again, long after
// the kernel started, and a later step's shorter hop passed it): the ranks' message sizes
// disagreed and the run failed. Every protocol now runs it to the end.
TEST_F(ProtocolOrder, SendsNeverOvertakeOnAConnection) {
  for (const char* protocol : {"simple", "ll128", "auto"}) {
    const fs::path out = dir_ / protocol;
    const auto run =
        RunCosim("tests/cosim/fixtures/protocol_overtaking.ini --set collectives.protocol=" +
                 std::string(protocol) + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << protocol << ": " << run.output;
    EXPECT_EQ(ReadJson(out / "results.json").at("status"), "complete") << protocol;
  }
}

}  // namespace
