// The network models a scenario can run on (network.model), behind one seam: each builds,
// from the topology, an NboxNetworkModel (per-port counters for the report) and an
// NboxTransport (messages between ranks, delivery callbacks) that the job runtime uses
// without knowing which model it is (docs/DESIGN.md, "Network models").
#pragma once

#include <string>
#include <vector>

#include "ns3/nbox-network-model.h"
#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "tools/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

struct BuiltNetwork {
  ns3::Ptr<ns3::NboxNetworkModel> model;
  ns3::Ptr<ns3::NboxTransport> transport;
  // The packet model's ns-3 network (nodes, devices), for tools that need packets; null for
  // the other models.
  ns3::Ptr<ns3::NboxNetwork> packet;
};

struct NetworkModelEntry {
  std::string name;  // the value of network.model
  BuiltNetwork (*build)(const scenario::Scenario& scenario, const topo::Topology& topology,
                        const std::vector<int>& rank_to_host);
};

// Every model, in the order the key documents them.
const std::vector<NetworkModelEntry>& NetworkModels();

// Builds the scenario's network.model. Throws std::invalid_argument for an unknown model.
BuiltNetwork BuildNetworkModel(const scenario::Scenario& scenario, const topo::Topology& topology,
                               const std::vector<int>& rank_to_host);

}  // namespace nbox::cosim
