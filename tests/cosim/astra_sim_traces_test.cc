// ASTRA-sim's own microbenchmark traces (tests/workloads/fixtures/astra-sim: one collective of
// 1 MB per NPU file, no pg_name, no comm_groups.json, the node's id the NPU's index) run in
// nbox-cosim unmodified, and take the time a store-and-forward star gives them by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

// The star: 100 Gb/s links of 1 us, MTU 9000.
constexpr double kRate = 100e9 / 8;  // bytes/s
constexpr double kLatency = 1e-6;

// How a transport cuts a message into packets: data per packet, and the bytes each adds.
struct Framing {
  double payload;
  double headers;
};
// TCP (analytical and flow models): the MTU less IP and TCP headers (52), plus PPP's 2.
constexpr Framing kTcp{9000 - 52, 52 + 2};
// RoCE: 8,192 bytes (the largest InfiniBand MTU within 9000 less 44 of IP, UDP, BTH and ICRC),
// plus those and Ethernet's 14 and 4.
constexpr Framing kRoce{8192, 14 + 20 + 8 + 12 + 4 + 4};

double WireBytes(double m, Framing f) {
  return m + std::ceil(m / f.payload) * f.headers;
}
double LastPacketBytes(double m, Framing f) {
  return m - (std::ceil(m / f.payload) - 1) * f.payload + f.headers;
}
// One message of m bytes from a host to another through the switch: two links' latency, its
// packets on the first link, the last one again on the second (store and forward).
double MessageSeconds(double m, Framing f) {
  return 2 * kLatency + WireBytes(m, f) / kRate + LastPacketBytes(m, f) / kRate;
}

struct Case {
  const char* collective;  // ASTRA-sim's folder name
  int npus;
};

// nbox's ring and direct algorithms in ASTRA-sim's sizes (its Ring.cc): an all-reduce of S moves
// 2 (n - 1) messages of S / n; a reduce-scatter of S, n - 1 of S / n; an all-gather of comm_size
// s per rank (ASTRA-sim's convention), n - 1 of s; an all-to-all of S, n - 1 messages of S / n
// from every host at once through its one link.
double ClosedFormSeconds(const Case& c, Framing f) {
  const double s = 1 << 20;
  const int n = c.npus;
  const std::string op = c.collective;
  if (op == "all_reduce") return 2 * (n - 1) * MessageSeconds(s / n, f);
  if (op == "reduce_scatter") return (n - 1) * MessageSeconds(s / n, f);
  if (op == "all_gather") return (n - 1) * MessageSeconds(s, f);
  return 2 * kLatency + (n - 1) * WireBytes(s / n, f) / kRate + LastPacketBytes(s / n, f) / kRate;
}

class AstraSimTraces : public CliTest, public ::testing::WithParamInterface<Case> {
 protected:
  AstraSimTraces() : CliTest("nbox-astra-sim") {}

  double IterationSeconds(const std::string& network) {
    const Case& c = GetParam();
    const fs::path out = dir_ / "out";
    fs::remove_all(out);
    const std::string folder = std::string("tests/workloads/fixtures/astra-sim/microbenchmarks/") +
                               c.collective + "/" + std::to_string(c.npus) + "npus_1MB";
    const auto run = RunCosim(
        "tests/cosim/fixtures/astra_sim_star.ini --set job.world_size=" + std::to_string(c.npus) +
        " --set topology.hosts=" + std::to_string(c.npus) + " --set workload.trace_dir=" +
        fs::absolute(folder).string() + " " + network + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("no comm_groups.json"), std::string::npos) << run.output;
    const auto results = ReadJson(out / "results.json");
    EXPECT_EQ(results.at("workload").at("trace_prefix"), c.collective);
    return results.at("iterations").at(0).at("time_s").get<double>();
  }
};

TEST_P(AstraSimTraces, RunUnmodifiedInTheClosedFormsTime) {
  const double tcp = ClosedFormSeconds(GetParam(), kTcp);
  EXPECT_NEAR(IterationSeconds("--set network.model=analytical"), tcp, tcp * 0.01);
  EXPECT_NEAR(IterationSeconds("--set network.model=flow"), tcp, tcp * 0.01);
  // Lossless RoCE packet by packet (its acknowledgements share the links).
  const double roce = ClosedFormSeconds(GetParam(), kRoce);
  EXPECT_NEAR(IterationSeconds("--set network.model=packet --set network.transport=roce"), roce,
              roce * 0.02);
}

INSTANTIATE_TEST_SUITE_P(Microbenchmarks, AstraSimTraces,
                         ::testing::Values(Case{"all_reduce", 4}, Case{"all_reduce", 8},
                                           Case{"all_reduce", 16}, Case{"all_gather", 4},
                                           Case{"all_gather", 8}, Case{"all_gather", 16},
                                           Case{"reduce_scatter", 4}, Case{"reduce_scatter", 8},
                                           Case{"reduce_scatter", 16}, Case{"all_to_all", 4},
                                           Case{"all_to_all", 8}, Case{"all_to_all", 16}),
                         [](const auto& info) {
                           return std::string(info.param.collective) + "_" +
                                  std::to_string(info.param.npus);
                         });

}  // namespace
