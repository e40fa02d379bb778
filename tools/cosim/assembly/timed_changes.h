// Changes to the cluster at moments of the run ([events] at): GPUs that slow down and links
// whose rate changes, carried out as ns-3 events on whichever network model runs
// (NboxNetworkModel::SetPortRate; NboxRankApp::SetComputeTimeFactor).
#pragma once

#include <cstdint>
#include <vector>

#include "ns3/nbox-job.h"
#include "ns3/nbox-network-model.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

// A change with the ports it sets: both directions (2 x link id + side) of every link joining
// its two nodes; none for a GPU change.
struct ResolvedChange {
  scenario::TimedChange change;
  std::vector<uint32_t> ports;
};

// Finds the links of each link change in `topology`. Throws std::invalid_argument naming the
// scenario file, [events] at and the change when a node does not exist (with the nearest
// name) or the two nodes share no link.
std::vector<ResolvedChange> ResolveTimedChanges(const scenario::Scenario& s,
                                                const topo::Topology& topology);

// Schedules every change at its time. A GPU change sets each named rank's compute time factor
// to its fleet factor (`fleet_factors`, ComputeTimeFactors; empty = 1 for all) times the
// change's slowdown, so a straggler's later compute ops take that much longer (one already
// running keeps its time); a link change sets its ports' rates.
void ScheduleTimedChanges(const std::vector<ResolvedChange>& changes,
                          const std::vector<double>& fleet_factors,
                          ns3::Ptr<ns3::NboxNetworkModel> model, ns3::Ptr<ns3::NboxJob> job);

}  // namespace nbox::cosim
