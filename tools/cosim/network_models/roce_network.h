// The RoCE path of a scenario (network.transport = roce): the [roce] keys as attributes of
// the NIC, switch MMU and devices that NboxRoceNetworkHelper builds.
#pragma once

#include "ns3/nbox-roce-network-helper.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

// A helper configured from network.mtu, job.seed and every [roce] key.
ns3::NboxRoceNetworkHelper MakeRoceNetworkHelper(const scenario::Scenario& scenario);

// Builds the RoCE fabric of `topology`. Throws std::invalid_argument naming roce.buffer when a
// switch's buffer cannot hold its ports' reserves and PFC headroom.
ns3::Ptr<ns3::NboxNetwork> InstallRoceNetwork(const scenario::Scenario& scenario,
                                              const topo::Topology& topology);

}  // namespace nbox::cosim
