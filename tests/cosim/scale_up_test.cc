// Scale-up on the TCP path: 2 servers x 8 GPUs (NVSwitch, a NIC per GPU, rail-optimised
// fabric), one all-reduce, run through the ns-3 module as nbox-cosim does.
//
// Independent expectations, with G = 8 GPUs per server, S = 2 servers, W = 16, one channel,
// B bytes, one message per ring step and cell (no chunking), g(R) the TCP goodput of a link of
// rate R, R/8 * (MTU-52) / (MTU+2), and L(R, l) = 2 l + (MTU+2)*8/R the latency of one hop
// through a switch (two propagation delays and the store-and-forward of one packet):
//   server-aware ring: the ring crosses between servers twice, each crossing a NIC hop that
//     carries 2(W-1) messages of B/W. The NVLink hops (9x faster) refill a crossing faster
//     than it drains (the chain of 7 NVLink hops back to the other crossing takes less than
//     7 NIC messages), so each crossing sends back to back and its latency shows once:
//       T_ring = 2(W-1)/W * B / g(nic) + L(nic, l);
//   hierarchical: an NVLink ring reduce-scatter of G-1 steps, an all-reduce of B/G over each
//     rail (S-1 reduce-scatter and S-1 all-gather steps), an NVLink ring all-gather of G-1
//     steps, each step paying its latency (the alpha-beta model of the algorithm):
//       T_hier = 2 [(G-1)/G * B / g(nvlink) + (G-1) L(nvlink, l_nv)]
//                + 2(S-1)/S * (B/G) / g(nic) + 2(S-1) L(nic, l).
// Both within 5% of the simulated all-reduce. The ranks start together and the TCP windows
// start open (an initial window of 100 segments covers every link's bandwidth-delay product:
// 25 segments on a NIC hop, 55 on an NVLink hop), which is what the formulas describe. A
// second iteration would not do: its ranks start skewed by the first one's uneven finish.
//
// Port counters: spine links carry nothing with either algorithm (a rank-order ring, for
// contrast, does cross the spines); NIC links carry exactly the messages between servers
// (4(W-1)/W B for the ring, 2(S-1)/S B for the hierarchical all-reduce) and NVLink links the
// rest, up to TCP/IP headers and ACKs.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/enum.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "tests/cosim/job_fixture.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/summary.h"
#include "topologies/servers.h"

namespace nbox::testing {
namespace {

constexpr int kServers = 2;
constexpr int kGpus = 8;
constexpr int kWorld = kServers * kGpus;
constexpr int kChannels = 1;
constexpr uint32_t kMtu = 9000;
constexpr double kNvlinkBps = 3.6e12;  // H100: 450 GB/s per direction
constexpr double kNvlinkLatency = 0.25e-6;
constexpr double kNicBps = 400e9;
constexpr double kLatency = 1e-6;
constexpr int kIterations = 1;
constexpr uint32_t kInitialWindowSegments = 100;

enum class Algorithm { kPlainRing, kServerRing, kHierarchical };

struct Traffic {
  uint64_t nvlink = 0;  // wire bytes NVSwitch -> GPU
  uint64_t nic = 0;     // wire bytes rail switch -> GPU
  uint64_t spine = 0;   // wire bytes on any spine link, both directions
};

struct Outcome {
  double seconds = 0;  // the all-reduce's iteration
  Traffic traffic;
};

bool StartsWith(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

Outcome RunAllReduce(Algorithm algorithm, uint64_t bytes) {
  topo::ServerSpec server;
  server.gpus = kGpus;
  server.nvlink_rate_bps = kNvlinkBps;
  server.nvlink_latency_s = kNvlinkLatency;
  server.nic_rate_bps = kNicBps;
  const auto topology = topo::MakeRail(kServers, server, 2, kNicBps, kLatency);
  const auto rank_to_host = topo::PlaceRanks(topology, kWorld);
  ns3::NboxNetworkConfig config;
  config.mtu = kMtu;
  auto network = ns3::NboxNetworkHelper(config).Install(topology);
  ns3::Config::SetDefault("ns3::TcpSocket::InitialCwnd",
                          ns3::UintegerValue(kInitialWindowSegments));
  auto transport = ns3::CreateObject<ns3::NboxTcpTransport>(network, rank_to_host);

  ns3::NboxJobHelper helper;
  helper.SetCommunicatorAttribute("Channels", ns3::UintegerValue(kChannels));
  helper.SetCommunicatorAttribute("ChunkSize", ns3::UintegerValue(0));
  helper.SetCommunicatorAttribute(
      "RanksPerServer", ns3::UintegerValue(algorithm == Algorithm::kPlainRing ? 0 : kGpus));
  helper.SetCommunicatorAttribute(
      "AllReduceAlgorithm",
      ns3::StringValue(algorithm == Algorithm::kHierarchical ? "Hierarchical" : "Ring"));
  auto program = std::make_shared<const work::RankProgram>(AllReduceProgram(bytes, kIterations));
  std::vector<std::shared_ptr<const work::RankProgram>> programs(kWorld, program);
  auto job = helper.Install(network, transport, programs, rank_to_host);

  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  Outcome outcome;
  EXPECT_TRUE(loop.finished);
  const auto summary = cosim::Summarize(*job->GetRecords());
  EXPECT_EQ(summary.iterations.size(), static_cast<size_t>(kIterations));
  if (!summary.iterations.empty()) outcome.seconds = summary.iterations[0].time_s;
  for (const auto& port : network->GetStats().ports) {
    if (StartsWith(port.fromNode, "spine") || StartsWith(port.toNode, "spine")) {
      outcome.traffic.spine += port.txBytes;
    } else if (StartsWith(port.fromNode, "nvsw")) {
      outcome.traffic.nvlink += port.txBytes;
    } else if (StartsWith(port.fromNode, "rail")) {
      outcome.traffic.nic += port.txBytes;
    }
  }
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
  return outcome;
}

double Goodput(double rate_bps) {
  return rate_bps / 8 * (kMtu - 52.0) / (kMtu + 2.0);
}
double HopLatency(double rate_bps, double latency_s) {
  return 2 * latency_s + (kMtu + 2.0) * 8 / rate_bps;
}

double RingSeconds(double bytes) {
  return 2.0 * (kWorld - 1) / kWorld * (bytes / kChannels) / Goodput(kNicBps) +
         HopLatency(kNicBps, kLatency);
}

double HierarchicalSeconds(double bytes) {
  const double server_phase = (kGpus - 1.0) / kGpus * bytes / Goodput(kNvlinkBps) +
                              (kGpus - 1) * HopLatency(kNvlinkBps, kNvlinkLatency);
  const double rail_phase = 2.0 * (kServers - 1) / kServers * (bytes / kGpus) / Goodput(kNicBps) +
                            2 * (kServers - 1) * HopLatency(kNicBps, kLatency);
  return 2 * server_phase + rail_phase;
}

// Payload bytes `payload` arrive as wire bytes within [payload, payload * (1 + headers) +
// ACKs of the reverse direction]: (MTU+2)/(MTU-52) per data packet and at most one 54-byte
// ACK per segment of equal traffic the other way.
void ExpectWireBytesCarry(uint64_t wire, double payload, const char* what) {
  const double segment = kMtu - 52.0;
  const double upper = payload * (kMtu + 2.0) / segment + payload / segment * 54;
  EXPECT_GE(static_cast<double>(wire), payload) << what;
  EXPECT_LE(static_cast<double>(wire), upper) << what;
}

constexpr uint64_t kBytes = 8 << 20;

TEST(ScaleUpTcp, ServerAwareRingMatchesAlphaBetaAndStaysOffTheSpines) {
  const Outcome ring = RunAllReduce(Algorithm::kServerRing, kBytes);
  const double expected = RingSeconds(kBytes);
  std::printf("server-aware ring: simulated %.3f us, alpha-beta %.3f us, ratio %.4f\n",
              ring.seconds * 1e6, expected * 1e6, ring.seconds / expected);
  EXPECT_NEAR(ring.seconds / expected, 1.0, 0.05);
  EXPECT_EQ(ring.traffic.spine, 0u);
  // Per iteration, 2 crossings per channel, each 2(W-1) messages of B/(C W).
  ExpectWireBytesCarry(ring.traffic.nic, kIterations * 4.0 * (kWorld - 1) / kWorld * kBytes,
                       "NIC links, ring");
  // Every other hop of every ring is an NVLink hop: (W - 2) per channel.
  ExpectWireBytesCarry(ring.traffic.nvlink,
                       kIterations * (kWorld - 2.0) * 2 * (kWorld - 1) / kWorld * kBytes,
                       "NVLink links, ring");
}

TEST(ScaleUpTcp, HierarchicalMatchesAlphaBetaBeatsTheRingAndKeepsServersOnNvlink) {
  const Outcome hier = RunAllReduce(Algorithm::kHierarchical, kBytes);
  const double expected = HierarchicalSeconds(kBytes);
  std::printf("hierarchical: simulated %.3f us, alpha-beta %.3f us, ratio %.4f\n",
              hier.seconds * 1e6, expected * 1e6, hier.seconds / expected);
  EXPECT_NEAR(hier.seconds / expected, 1.0, 0.05);
  EXPECT_LT(HierarchicalSeconds(kBytes), RingSeconds(kBytes));
  EXPECT_LT(hier.seconds, RingSeconds(kBytes));
  EXPECT_EQ(hier.traffic.spine, 0u);
  // Only phase 2 leaves a server: 2(S-1)/S B/G per GPU.
  ExpectWireBytesCarry(hier.traffic.nic,
                       kIterations * kWorld * 2.0 * (kServers - 1) / kServers * kBytes / kGpus,
                       "NIC links, hierarchical");
  // Phases 1 and 3: (G-1)/G B each, per GPU.
  ExpectWireBytesCarry(hier.traffic.nvlink,
                       kIterations * kWorld * 2.0 * (kGpus - 1) / kGpus * kBytes,
                       "NVLink links, hierarchical");
}

// The contrast that shows the spine counters can see something: in rank order, server 0's
// GPU 7 hands to server 1's GPU 0, on another rail.
TEST(ScaleUpTcp, PlainRankOrderRingCrossesTheSpines) {
  const Outcome plain = RunAllReduce(Algorithm::kPlainRing, 1 << 20);
  EXPECT_GT(plain.traffic.spine, 0u);
}

}  // namespace
}  // namespace nbox::testing
