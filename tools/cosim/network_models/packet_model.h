// network.model = packet: every packet through ns-3 queues, TCP or RoCEv2 (the reference).
#pragma once

#include "ns3/nbox-network-helper.h"
#include "tools/cosim/network_models.h"

namespace nbox::cosim {

const NetworkModel& PacketModel();

// The TCP packet network's configuration from the [network] keys and job.seed (the RoCE one:
// roce_network.h).
ns3::NboxNetworkConfig MakeNetworkConfig(const scenario::Scenario& scenario);

}  // namespace nbox::cosim
