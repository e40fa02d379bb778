// results.json of a cluster run: how it ended, its fabric, each job's place and steady
// figures (the rest of each job's report in its own results-<job>.json), and the fabric's
// counters, shared by every job (docs/CLUSTERS.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/cosim/reports/run_result.h"

namespace nbox::cosim {

// `cluster`: the whole run (its scenario the cluster file's); `jobs` and `facts` per job.
std::string ClusterResultsJson(const RunResult& cluster, const std::vector<RunResult>& jobs,
                               const std::vector<ClusterJobFacts>& facts);

// A job's steady iteration together over alone, where it ran alone (and took time).
std::optional<double> Slowdown(double together_s, std::optional<double> alone_s);

// Where `rank_to_host`'s ranks first_rank .. first_rank + count - 1 run, by host name.
ClusterJobFacts FactsOf(const std::vector<std::string>& host_names,
                        const std::vector<int>& rank_to_host, int first_rank, int count);

}  // namespace nbox::cosim
