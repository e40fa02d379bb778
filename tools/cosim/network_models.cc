#include "tools/cosim/network_models.h"

#include <stdexcept>

#include "ns3/enum.h"
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

BuiltNetwork BuildFlow(const scenario::Scenario& s, const topo::Topology& topology,
                       const std::vector<int>& rank_to_host) {
  auto network = ns3::CreateObject<ns3::NboxFlowNetwork>();
  network->SetAttribute("Mtu", ns3::UintegerValue(s.network.mtu));
  network->SetAttribute("PacketFormat", ns3::EnumValue(s.network.transport == "roce"
                                                           ? ns3::NboxFlowNetwork::ROCE_PACKETS
                                                           : ns3::NboxFlowNetwork::TCP_PACKETS));
  network->SetAttribute("EcmpSeed", ns3::UintegerValue(s.job.seed));
  network->Build(topology);
  BuiltNetwork built;
  built.model = network;
  built.transport = ns3::CreateObject<ns3::NboxFlowTransport>(network, rank_to_host);
  return built;
}

}  // namespace

const std::vector<NetworkModelEntry>& NetworkModels() {
  static const std::vector<NetworkModelEntry> models = {
      {"packet", &BuildPacket},
      {"flow", &BuildFlow},
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
