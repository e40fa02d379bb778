#include "tools/cosim/network_models/analytical_model.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

#include "ns3/double.h"
#include "ns3/nbox-analytical-transport.h"
#include "tools/cosim/network_models/flow_model.h"

namespace nbox::cosim {
namespace {

BuiltNetwork Build(const scenario::Scenario& s, const topo::Topology& topology,
                   const std::vector<int>& rank_to_host) {
  auto network = BuildFlowPorts(s, topology);
  const std::string no_packets =
      "the analytical model times each collective in closed form and has no packets or queues";
  std::map<std::string, std::string> absent;
  for (const char* figure :
       {"drops", "ecn_marks", "peak_queue_bytes", "pfc_pauses", "retransmissions"}) {
    absent[figure] = no_packets;
  }
  network->SetAbsent(std::move(absent));
  auto transport = ns3::CreateObject<ns3::NboxAnalyticalTransport>(network, rank_to_host);
  const scenario::AnalyticalSection& a = s.analytical;
  for (const auto& [attribute, value] :
       {std::pair{"AllReduceFactor", a.allreduce_factor},
        std::pair{"AllGatherFactor", a.allgather_factor},
        std::pair{"ReduceScatterFactor", a.reducescatter_factor},
        std::pair{"BroadcastFactor", a.broadcast_factor},
        std::pair{"ReduceFactor", a.reduce_factor}, std::pair{"AllToAllFactor", a.alltoall_factor},
        std::pair{"PointToPointFactor", a.p2p_factor}}) {
    transport->SetAttribute(attribute, ns3::DoubleValue(value));
  }
  BuiltNetwork built;
  built.model = network;
  built.transport = transport;
  return built;
}

ConnectionMemoryCost ConnectionCost(const scenario::Scenario& s) {
  // Measured (memory_estimate.h): a direct all-reduce's, every one carrying, 0.3 KiB; DLRM's
  // 8.4 million, nearly all idle, 235 bytes. Plus, where links fail, its record for re-routing.
  const double rerouting = ReroutingBytesPerConnection(s);
  return {307 + rerouting, 235 + rerouting};
}

std::string Describe(const SettingText& setting) {
  // Each collective timed in closed form on its own routes: congestion from other traffic is
  // not seen, so the times are lower bounds wherever traffic shares links.
  return fmt::format(
      "analytical model (alpha-beta per collective on its routes' bottleneck, "
      "congestion-unaware: optimistic where traffic shares links), {} framing, MTU {}",
      setting("network.transport"), setting("network.mtu"));
}

// It times whole collectives: no flowlets, and no messages for output.messages to log.
void Check(scenario::RuleContext& context) {
  RefuseFlowletsWithoutPackets(context);
  if (context.scenario().output.messages != scenario::MessageLog::kNone) {
    context.Fail(fmt::format("{} needs messages, but {} times whole collectives",
                             context.Describe("output.messages"),
                             context.Describe("network.model")));
  }
}

}  // namespace

const NetworkModel& AnalyticalModel() {
  static const NetworkModel model = {"analytical",          Build,          FlowPortsMemoryCost,
                                     FlowPortsRouteEntries, ConnectionCost, Describe,
                                     "analytical",          Check};
  return model;
}

}  // namespace nbox::cosim
