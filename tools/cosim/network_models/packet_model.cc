#include "tools/cosim/network_models/packet_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>

#include "common/units.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-tcp-transport.h"
#include "tools/cosim/network_models/roce_network.h"
#include "tools/cosim/scenario/cross_key_rules.h"
#include "tools/cosim/scenario/timed_change_values.h"

namespace nbox::cosim {
namespace {

BuiltNetwork Build(const scenario::Scenario& s, const topo::Topology& topology,
                   const std::vector<int>& rank_to_host) {
  BuiltNetwork built;
  if (s.network.transport == scenario::Transport::kRoce) {
    built.packet = InstallRoceNetwork(s, topology);
    built.transport = ns3::CreateObject<ns3::NboxRoceTransport>(built.packet, rank_to_host);
  } else {
    built.packet = ns3::NboxNetworkHelper(MakeNetworkConfig(s)).Install(topology);
    built.transport = ns3::CreateObject<ns3::NboxTcpTransport>(built.packet, rank_to_host);
  }
  built.model = built.packet;
  return built;
}

NetworkMemoryCost MemoryCost(const scenario::Scenario& s) {
  // tools/bench/nbox-bench-memory, 2026-11-24 (fat-trees, stars, leaf-spines and rail fabrics
  // of 21 MiB to 2.1 GiB): every build within 8% of its fit. Links carry ns-3 nodes' devices,
  // queues and channels; routes are hash-map entries (NboxEcmpRouting).
  if (s.network.transport == scenario::Transport::kRoce) return {19.6 * kNetworkMiB, 9630, 9.5};
  return {20.0 * kNetworkMiB, 19416, 39.2};
}

uint64_t RouteEntries(const scenario::Scenario& s, const topo::Topology& topology) {
  // Every node with more than one link keeps a route per destination in its ns-3 routing:
  // per host on RoCE, per host address (one per link of the host) over TCP
  // (nbox-network-helper.cc).
  uint64_t routing_nodes = 0;
  for (auto [v, end] = boost::vertices(topology.graph); v != end; ++v) {
    if (boost::out_degree(*v, topology.graph) > 1) ++routing_nodes;
  }
  uint64_t destinations = topology.hosts.size();
  if (s.network.transport == scenario::Transport::kTcp) {
    destinations = 0;
    for (topo::Vertex host : topology.hosts)
      destinations += boost::out_degree(host, topology.graph);
  }
  return routing_nodes * destinations;
}

ConnectionMemoryCost ConnectionCost(const scenario::Scenario& s) {
  // A direct all-reduce of 1 MiB (every pair connected, every peer sent to at once) at W = 64,
  // 96 and 128 on a star, against the same job's peak: two ns-3 sockets and their buffers
  // over TCP, a queue pair on RoCE (memory_estimate.h). An idle connection is not measured
  // apart: charged as one that carries (its sockets or queue pair exist from the start).
  const double bytes = s.network.transport == scenario::Transport::kRoce ? 4.6 * 1024 : 23.9 * 1024;
  return {bytes, bytes};
}

std::string Describe(const SettingText& setting) {
  if (setting("network.transport") == "roce") {
    // The ECN thresholds are given at 100 Gb/s and scale with each port's rate (roce keys).
    return fmt::format(
        "roce {}, PFC {}, MTU {}, switch buffer {}, ECN {}..{} per 100 Gb/s of port rate, p {}",
        setting("roce.cc"), setting("roce.pfc"), setting("network.mtu"), setting("roce.buffer"),
        setting("roce.ecn_kmin"), setting("roce.ecn_kmax"), setting("roce.ecn_pmax"));
  }
  return fmt::format("{} {}, MTU {}, switch queue {}, ECN {}", setting("network.transport"),
                     setting("network.tcp_cc"), setting("network.mtu"),
                     setting("network.switch_queue"), setting("network.ecn"));
}

}  // namespace

ns3::NboxNetworkConfig MakeNetworkConfig(const scenario::Scenario& s) {
  ns3::NboxNetworkConfig c;
  c.mtu = s.network.mtu;
  c.switchQueueBytes = s.network.switch_queue_bytes;
  c.ecn = s.network.ecn;
  c.ecnThresholdBytes = s.network.ecn_threshold_bytes;
  c.tcpCongestionControl = s.network.tcp_cc;
  c.tcpBufferBytes = s.network.tcp_buffer_bytes;
  c.tcpMinRtoSeconds = s.network.tcp_min_rto_s;
  // The delayed-ACK timeout must stay below the minimum RTO (a lone segment would time out
  // before its ACK): tcp_delayed_ack, or half a smaller minimum RTO (scenarios/README.md).
  c.tcpDelAckTimeoutSeconds = std::min(s.network.tcp_delayed_ack_s, s.network.tcp_min_rto_s / 2);
  c.tcpLimitOutputBytes = static_cast<uint32_t>(s.network.tcp_limit_output_bytes);
  c.tcpReordering = s.network.tcp_reordering;
  c.tcpRackTlp = s.network.tcp_rack_tlp;
  c.tcpForwardRetransmissions = s.network.tcp_forward_retransmissions;
  c.ecmpSeed = s.job.seed;
  c.cutThrough = s.network.switching == scenario::Switching::kCutThrough;
  c.flowletTimeoutSeconds =
      s.network.routing == scenario::Routing::kFlowlet ? s.network.flowlet_timeout_s : 0;
  c.spraying = s.network.routing == scenario::Routing::kSpray;
  c.reroutable = scenario::HasLinkFailures(s.events);
  return c;
}

namespace {

// The TCP retransmission timeout's rule (scenario::TcpMinRtoRefusal) for the networks only
// their build knows: a topology file's links, a rail fabric's NVLink, NIC and fabric rates.
void RefuseTcpMinRtoBelowTheRoundTrip(const scenario::Scenario& s, const topo::Topology& topology) {
  const bool file = s.topology.kind == scenario::TopologyKind::kFile;
  if (!file && s.topology.kind != scenario::TopologyKind::kRail) return;
  double slowest_bps = 0;
  for (const topo::Edge& link : topology.links) {
    const double rate = topology.graph[link].rate_bps;
    if (slowest_bps == 0 || rate < slowest_bps) slowest_bps = rate;
  }
  const std::string network =
      file ? "the network of topology.file = " + s.topology.file : "this rail fabric";
  const std::string refusal = scenario::TcpMinRtoRefusal(
      s, slowest_bps,
      fmt::format("network.tcp_min_rto = {}", FormatSeconds(s.network.tcp_min_rto_s)), network);
  if (!refusal.empty()) throw std::invalid_argument(s.path + ": " + refusal);
}

// The scenario's rules for this model: TCP's minimum timeout, and link failures only where
// its routes can be re-installed: on TCP (the RoCE switches and NICs keep their own tables),
// without flowlets (a flow keeps the path its flowlet was given).
void CheckPacketScenario(scenario::RuleContext& context) {
  scenario::CheckTcpMinRto(context);
  const scenario::Scenario& s = context.scenario();
  if (!scenario::HasLinkFailures(s.events)) return;
  const char* refusal = nullptr;
  if (s.network.transport == scenario::Transport::kRoce) {
    refusal =
        "on RoCE packets (network.transport = roce) the switches and NICs keep the routes "
        "they were built with: run it on TCP packets or on network.model = flow";
  } else if (s.network.routing == scenario::Routing::kFlowlet) {
    refusal =
        "flowlet switching (network.routing = flowlet) keeps each flow on the set of paths "
        "it was given: use ecmp or spray";
  }
  if (refusal == nullptr) return;
  for (const scenario::TimedChange& change : s.events.changes) {
    if (change.kind == scenario::TimedChange::Kind::kLinksDown ||
        change.kind == scenario::TimedChange::Kind::kLinksUp) {
      context.Fail(fmt::format("[events] at = '{}': links that fail and come back: {}",
                               scenario::TimedChangeText(change), refusal));
      return;
    }
  }
}

}  // namespace

const NetworkModel& PacketModel() {
  static const NetworkModel model = {"packet",
                                     Build,
                                     MemoryCost,
                                     RouteEntries,
                                     ConnectionCost,
                                     Describe,
                                     "",
                                     CheckPacketScenario,
                                     RefuseTcpMinRtoBelowTheRoundTrip};
  return model;
}

}  // namespace nbox::cosim
