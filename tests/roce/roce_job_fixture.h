// Runs a bare collective program on a RoCE fabric built from a topology, for the validation
// tests of the RoCE path.
#pragma once

#include <functional>
#include <vector>

#include "ns3/nbox-network.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-transport.h"
#include "tools/cosim/reports/summary.h"
#include "topologies/topology.h"
#include "workloads/program.h"

namespace nbox::testing {

struct RoceJobOutcome {
  cosim::JobSummary summary;
  ns3::NboxTransportStats transport;
  ns3::NboxRoceNicStats nic;
  ns3::NboxNetworkStats network;
  bool finished = false;
};

struct RoceJob {
  topo::Topology topology;
  std::vector<int> rank_to_host;  // rank r runs on host rank_to_host[r]
  uint32_t channels = 1;
  uint64_t chunk_bytes = 0;
  // Configures the fabric (MTU, PFC, [roce] attributes) before it is built.
  std::function<void(ns3::NboxRoceNetworkHelper&)> configure;
};

// Runs `program` on every rank and tears the simulator down again.
RoceJobOutcome RunRoceJob(const RoceJob& job, const work::RankProgram& program);

}  // namespace nbox::testing
