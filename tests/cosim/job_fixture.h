// Builds a small simulated job directly with the ns-3 module's helpers, for tests that need
// programs other than the DDP workload (a bare all-reduce, say).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/reports/collect_result.h"
#include "tools/cosim/reports/summary.h"
#include "tools/cosim/reports/traffic_matrix.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"
#include "workloads/program.h"

namespace nbox::testing {

struct StarJob {
  int world = 4;
  double rate_bps = 100e9;
  double latency_s = 1e-6;
  ns3::NboxNetworkConfig network;
  uint32_t channels = 1;
  uint64_t chunk_bytes = 0;
  std::string all_reduce_algorithm = "Ring";  // attribute NboxCommunicator::AllReduceAlgorithm
  std::string rooted_algorithm = "Ring";      // attributes BroadcastAlgorithm, ReduceAlgorithm
  std::string collective_order = "FIFO";      // attribute CollectiveOrder
  uint32_t max_concurrent = 1;                // attribute MaxConcurrentCollectives
  bool record_compute_ops = true;             // attribute NboxRankApp::RecordComputeOps
};

// `iterations` iterations of one all-reduce of `bytes` each, nothing else.
work::RankProgram AllReduceProgram(uint64_t bytes, int iterations);

struct JobOutcome {
  cosim::JobSummary summary;
  ns3::NboxTransportStats transport;
  ns3::NboxNetworkStats network;
  uint64_t schedule_bytes = 0;   // payload the schedules say must cross the network
  cosim::TrafficMatrix traffic;  // the same by (src, dst, communicator, channel)
  ns3::Ptr<ns3::NboxJobRecords> records;
  bool finished = false;
};

// The time of the collective of iteration `iteration` (0 or 1) of two, each one collective of
// `bytes` (from or to rank 0 if rooted) on the star, from its earliest member's start to its
// latest member's end. Fails the calling test if the job does not finish.
double CollectiveSeconds(const StarJob& setup, coll::CollectiveOp op, uint64_t bytes,
                         int iteration);
// The steady time of an all-reduce: iteration 1 (iteration 0 opens the TCP windows).
double SteadyAllReduceSeconds(const StarJob& setup, uint64_t bytes);

// Runs `program` on every rank of a star and tears the simulator down again.
JobOutcome RunOnStar(const StarJob& setup, const work::RankProgram& program);
// The same for a whole job's programs (world_size must be setup.world).
JobOutcome RunOnStar(const StarJob& setup, const work::JobPrograms& job);

// A scenario run through nbox-cosim's assembly and simulation loop, in this process and
// without writing files; the simulator is torn down again.
struct ScenarioOutcome {
  bool finished = false;
  cosim::JobSummary summary;
  cosim::RunResult result;
  ns3::Ptr<ns3::NboxJobRecords> records;
};
ScenarioOutcome RunScenario(const scenario::Scenario& s);

}  // namespace nbox::testing
