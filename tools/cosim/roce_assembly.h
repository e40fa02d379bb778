// The RoCE path of a scenario (network.transport = roce): the [roce] keys as attributes of
// the NIC, switch MMU and devices that NboxRoceNetworkHelper builds.
#pragma once

#include "ns3/nbox-roce-network-helper.h"
#include "tools/scenario/scenario.h"

namespace nbox::cosim {

// A helper configured from network.mtu, job.seed and every [roce] key.
ns3::NboxRoceNetworkHelper MakeRoceNetworkHelper(const scenario::Scenario& scenario);

}  // namespace nbox::cosim
