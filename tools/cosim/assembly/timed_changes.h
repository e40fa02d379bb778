// Changes to the cluster at moments of the run ([events] at): GPUs that slow down, links whose
// rate changes, links and switches that fail and come back, carried out as ns-3 events on
// whichever network model runs (NboxNetworkModel::SetPortRate and SetFailedLinks;
// NboxRankApp::SetComputeTimeFactor).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ns3/nbox-job.h"
#include "ns3/nbox-network-model.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

// A change with what it acts on in the topology: a link change's ports (both directions, 2 x
// link id + side, of every link joining its two nodes; of every link of a switch); a failure
// or a repair's set of links down once it has happened, all of them (a link down twice stays
// down once).
struct ResolvedChange {
  scenario::TimedChange change;
  std::vector<uint32_t> ports;
  std::vector<uint32_t> failed_after;
};

// Finds what each change acts on in `topology`, `rank_to_host` placing the job. Throws
// std::invalid_argument naming the scenario file, [events] at and the change when a node does
// not exist (with the nearest name), two nodes share no link, a switch change names a host, or
// a failure cuts two of the job's hosts off from each other (naming them and their ranks).
std::vector<ResolvedChange> ResolveTimedChanges(const scenario::Scenario& s,
                                                const topo::Topology& topology,
                                                const std::vector<int>& rank_to_host);

// Schedules every change at its time. A GPU change sets each named rank's compute time factor
// to its fleet factor (`fleet_factors`, ComputeTimeFactors; empty = 1 for all) times the
// change's slowdown, so a straggler's later compute ops take that much longer (one already
// running keeps its time); a rate change sets its ports' rates; a failure or a repair gives the
// model its links down and the routes over the rest, computed then from `topology`.
void ScheduleTimedChanges(const std::vector<ResolvedChange>& changes,
                          const std::vector<double>& fleet_factors, const topo::Topology& topology,
                          ns3::Ptr<ns3::NboxNetworkModel> model, ns3::Ptr<ns3::NboxJob> job);

}  // namespace nbox::cosim
