// Everything one nbox-cosim run produced, ready for the writers (results.json, terminal).
//
// RunResult holds only simulation outputs, which are deterministic; wall-clock figures live
// in PerfFigures and go to perf.json and the terminal, never into results.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "tools/cosim/real_ranks/real_rank_report.h"
#include "tools/cosim/reports/summary.h"
#include "tools/cosim/scenario/scenario.h"
#include "workloads/ddp.h"

namespace nbox::cosim {

struct RunResult {
  scenario::Scenario scenario;
  std::string topology_description;
  int hosts = 0;
  int switches = 0;
  int links = 0;
  work::ModelSpec model;
  std::string workload_description;         // Workload::description
  nlohmann::ordered_json workload_details;  // Workload::details
  int collectives_per_iteration = 0;        // communication ops of the first rank in iteration 0
  JobSummary summary;
  ns3::NboxNetworkStats network;
  ns3::NboxTransportStats transport;
  uint64_t events = 0;         // ns-3 events executed
  double simulated_s = 0;      // simulator clock at the end
  RealRanksReport real_ranks;  // present only in runs with real ranks
  std::string interrupted;     // "stopped by signal 2 (Interrupt)" when a signal ended the run
  // One job of a cluster run: its name (its report leaves the fabric's figures, shared by
  // every job, to the cluster's). "" for a run of one job.
  std::string cluster_job;
  // Why a run that ended cannot be trusted ("2 messages arrived that no receive took: ..."),
  // or "".
  std::string failure;
};

// What a cluster's report says of one job beyond its own results: where it ran, and how long
// its steady iteration took alone on those hosts (cluster.alone).
struct ClusterJobFacts {
  int first_rank = 0;                    // its rank 0 among the cluster's ranks
  std::vector<std::string> host_names;   // rank r's host, by the topology's name
  std::string hosts;                     // the same in a few words: "h0..h7", "h0, h4, ... (8)"
  std::optional<double> alone_steady_s;  // not run (cluster.alone off) or unfinished: none
};

struct PerfFigures {
  double wall_s = 0;
  double events_per_s = 0;
  double wall_per_simulated_s = 0;
  long peak_rss_kib = 0;
};

// Peak resident memory of this process so far (getrusage), KiB.
long PeakRssKib();

// results.json. Write streams it into `out`: the document of a large job's collectives is
// several times its text, which is never held whole as well.
std::string ResultsJson(const RunResult& result);
void WriteResultsJson(const RunResult& result, std::ostream& out);
std::string PerfJson(const RunResult& result, const PerfFigures& perf);

// How the run ended, first in results.json: "complete", or why its figures are partial.
std::string RunStatus(const RunResult& result);
// results.json's "network": the fabric's counters.
nlohmann::ordered_json NetworkJson(const RunResult& result);

}  // namespace nbox::cosim
