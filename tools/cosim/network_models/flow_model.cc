#include "tools/cosim/network_models/flow_model.h"

#include <fmt/format.h>

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nbox-flow-transport.h"
#include "ns3/uinteger.h"
#include "tools/cosim/scenario/timed_change_values.h"

namespace nbox::cosim {
namespace {

BuiltNetwork Build(const scenario::Scenario& s, const topo::Topology& topology,
                   const std::vector<int>& rank_to_host) {
  BuiltNetwork built;
  auto network = BuildFlowPorts(s, topology);
  built.model = network;
  built.transport = ns3::CreateObject<ns3::NboxFlowTransport>(network, rank_to_host);
  return built;
}

ConnectionMemoryCost ConnectionCost(const scenario::Scenario& s) {
  // Measured (memory_estimate.h): a carrying connection 2.4 KiB (a direct all-reduce's, from
  // 1 to 4 channels at W = 256: its flow in the solver, its messages); an idle one 432 bytes
  // (its record, route and empty queue; DLRM's 1.8 million at W = 1,024, with freed pages
  // returned at once: tools/jemalloc_options.cc). Plus, where links fail, its record for
  // re-routing.
  const double rerouting = ReroutingBytesPerConnection(s);
  return {2.4 * 1024 + rerouting, 432 + rerouting};
}

std::string Describe(const SettingText& setting) {
  // Congestion control, queues and ECN do not exist in the flow model: only the framing
  // (headers per packet) and the ECMP hashing of the transport count.
  return fmt::format("flow model (max-min fair rates), {} framing and ECMP, MTU {}",
                     setting("network.transport"), setting("network.mtu"));
}

}  // namespace

ns3::Ptr<ns3::NboxFlowNetwork> BuildFlowPorts(const scenario::Scenario& s,
                                              const topo::Topology& topology) {
  auto network = ns3::CreateObject<ns3::NboxFlowNetwork>();
  network->SetAttribute("Mtu", ns3::UintegerValue(s.network.mtu));
  network->SetAttribute("PacketFormat",
                        ns3::EnumValue(s.network.transport == scenario::Transport::kRoce
                                           ? ns3::NboxFlowNetwork::ROCE_PACKETS
                                           : ns3::NboxFlowNetwork::TCP_PACKETS));
  network->SetAttribute("EcmpSeed", ns3::UintegerValue(s.job.seed));
  network->SetAttribute("Spray", ns3::BooleanValue(s.network.routing == scenario::Routing::kSpray));
  network->SetAttribute("Reroutable", ns3::BooleanValue(scenario::HasLinkFailures(s.events)));
  network->Build(topology);
  return network;
}

NetworkMemoryCost FlowPortsMemoryCost(const scenario::Scenario&) {
  // tools/bench/nbox-bench-memory, 2026-11-24 (as the packet model's): links are plain
  // records; a route is a row's 4-byte set id and 2-byte hop count (topologies/routes.cc);
  // the rest as fitted.
  return {19.9 * kNetworkMiB, 1090, 6.0};
}

double ReroutingBytesPerConnection(const scenario::Scenario& s) {
  // NboxFlowNetwork's record of a connection's hosts and ordinal (12 bytes), in a vector that
  // may hold up to twice its size while it grows.
  return scenario::HasLinkFailures(s.events) ? 24 : 0;
}

uint64_t FlowPortsRouteEntries(const scenario::Scenario&, const topo::Topology& topology) {
  // The equal-cost routes' rows only (topology.h), one entry per destination host.
  return topo::CountRouteRows(topology) * topology.hosts.size();
}

void RefuseFlowletsWithoutPackets(scenario::RuleContext& context) {
  const scenario::NetworkSection& network = context.scenario().network;
  if (network.routing != scenario::Routing::kFlowlet) return;
  context.Fail(fmt::format(
      "{} needs network.model = packet (flowlets end at pauses between packets, which the {} "
      "model does not have), got {}",
      context.Describe("network.routing"), network.model, context.Describe("network.model")));
}

const NetworkModel& FlowModel() {
  static const NetworkModel model = {
      "flow",   Build, FlowPortsMemoryCost,         FlowPortsRouteEntries, ConnectionCost,
      Describe, "",    RefuseFlowletsWithoutPackets};
  return model;
}

}  // namespace nbox::cosim
