// network.model = flow: link rates shared max-min fairly among the flows on their routes; no
// packets, queues or losses. Its ports and routes are the analytical model's too.
#pragma once

#include "ns3/nbox-flow-network.h"
#include "tools/cosim/network_models.h"

namespace nbox::cosim {

const NetworkModel& FlowModel();

// The flow model's ports and routes, built (the analytical model times and counts on them).
ns3::Ptr<ns3::NboxFlowNetwork> BuildFlowPorts(const scenario::Scenario& scenario,
                                              const topo::Topology& topology);

// What a build of those ports and routes holds: measured cost and route entries.
NetworkMemoryCost FlowPortsMemoryCost(const scenario::Scenario& scenario);
uint64_t FlowPortsRouteEntries(const scenario::Scenario& scenario, const topo::Topology& topology);
// What each connection costs the flow ports besides its transport's record: its record for
// re-routing when the scenario takes links down (0 otherwise).
double ReroutingBytesPerConnection(const scenario::Scenario& scenario);

// Refuses network.routing = flowlet: flowlets end at pauses between packets, which only the
// packet model has (NboxFlowletTable in NboxRoceSwitch and NboxEcmpRouting). Spraying the flow
// and analytical models follow (NboxFlowNetwork's Spray).
void RefuseFlowletsWithoutPackets(scenario::RuleContext& context);

}  // namespace nbox::cosim
