#include "tools/cosim/network_models.h"

#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/nbox-analytical-transport.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/nbox-flow-transport.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/uinteger.h"
#include "tools/cosim/assembly.h"
#include "tools/cosim/roce_assembly.h"

namespace nbox::cosim {
namespace {

BuiltNetwork BuildPacket(const scenario::Scenario& s, const topo::Topology& topology,
                         const std::vector<int>& rank_to_host) {
  BuiltNetwork built;
  if (s.network.transport == "roce") {
    built.packet = InstallRoceNetwork(s, topology);
    built.transport = ns3::CreateObject<ns3::NboxRoceTransport>(built.packet, rank_to_host);
  } else {
    built.packet = ns3::NboxNetworkHelper(MakeNetworkConfig(s)).Install(topology);
    built.transport = ns3::CreateObject<ns3::NboxTcpTransport>(built.packet, rank_to_host);
  }
  built.model = built.packet;
  return built;
}

// The flow model's ports and routes, which the analytical model times and counts on too.
ns3::Ptr<ns3::NboxFlowNetwork> BuildFlowPorts(const scenario::Scenario& s,
                                              const topo::Topology& topology) {
  auto network = ns3::CreateObject<ns3::NboxFlowNetwork>();
  network->SetAttribute("Mtu", ns3::UintegerValue(s.network.mtu));
  network->SetAttribute("PacketFormat", ns3::EnumValue(s.network.transport == "roce"
                                                           ? ns3::NboxFlowNetwork::ROCE_PACKETS
                                                           : ns3::NboxFlowNetwork::TCP_PACKETS));
  network->SetAttribute("EcmpSeed", ns3::UintegerValue(s.job.seed));
  network->SetAttribute("Spray", ns3::BooleanValue(s.network.routing == "spray"));
  network->Build(topology);
  return network;
}

BuiltNetwork BuildFlow(const scenario::Scenario& s, const topo::Topology& topology,
                       const std::vector<int>& rank_to_host) {
  BuiltNetwork built;
  auto network = BuildFlowPorts(s, topology);
  built.model = network;
  built.transport = ns3::CreateObject<ns3::NboxFlowTransport>(network, rank_to_host);
  return built;
}

BuiltNetwork BuildAnalytical(const scenario::Scenario& s, const topo::Topology& topology,
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

}  // namespace

const std::vector<NetworkModelEntry>& NetworkModels() {
  static const std::vector<NetworkModelEntry> models = {
      {"packet", &BuildPacket},
      {"flow", &BuildFlow},
      {"analytical", &BuildAnalytical},
  };
  return models;
}

BuiltNetwork BuildNetworkModel(const scenario::Scenario& s, const topo::Topology& topology,
                               const std::vector<int>& rank_to_host) {
  for (const NetworkModelEntry& entry : NetworkModels()) {
    if (entry.name == s.network.model) return entry.build(s, topology, rank_to_host);
  }
  throw std::invalid_argument("unknown network.model '" + s.network.model + "'");
}

}  // namespace nbox::cosim
