#include "tools/cosim/reports/cluster_results.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/cosim/output/output_folder_rules.h"

namespace nbox::cosim {

using nlohmann::ordered_json;

namespace {

ordered_json OrNull(std::optional<double> value) {
  return value ? ordered_json(*value) : nullptr;
}

}  // namespace

std::optional<double> Slowdown(double together_s, std::optional<double> alone_s) {
  if (!alone_s || !(*alone_s > 0)) return std::nullopt;
  return together_s / *alone_s;
}

ClusterJobFacts FactsOf(const std::vector<std::string>& host_names,
                        const std::vector<int>& rank_to_host, int first_rank, int count) {
  ClusterJobFacts facts;
  facts.first_rank = first_rank;
  bool consecutive = true;
  for (int rank = first_rank; rank < first_rank + count; ++rank) {
    const int host = rank_to_host.at(static_cast<size_t>(rank));
    facts.host_names.push_back(host_names.at(static_cast<size_t>(host)));
    consecutive &= rank == first_rank || host == rank_to_host[static_cast<size_t>(rank - 1)] + 1;
  }
  const std::string& first = facts.host_names.front();
  const std::string& last = facts.host_names.back();
  if (count <= 3) {
    for (const std::string& name : facts.host_names) {
      facts.hosts += (facts.hosts.empty() ? "" : ", ") + name;
    }
  } else if (consecutive) {
    facts.hosts = fmt::format("{}..{}", first, last);
  } else {
    facts.hosts = fmt::format("{}, {}, ... ({})", first, facts.host_names[1], count);
  }
  return facts;
}

std::string ClusterResultsJson(const RunResult& cluster, const std::vector<RunResult>& jobs,
                               const std::vector<ClusterJobFacts>& facts) {
  ordered_json settings = ordered_json::object();
  for (const auto& [key, value] : cluster.scenario.settings) {
    // Where the results go is not an input of the simulation (results.json's rule); a
    // cluster's jobs run their own [job], [workload] and [collectives], in their own reports,
    // but for the seed its events draw from.
    const bool own_job_key = key.rfind("job.", 0) == 0 && key != "job.seed";
    if (key == "output.dir" || own_job_key || key.rfind("workload.", 0) == 0 ||
        key.rfind("collectives.", 0) == 0 || key.rfind("realranks.", 0) == 0 ||
        key.rfind("debug.", 0) == 0) {
      continue;
    }
    settings[key] = value;
  }
  ordered_json job_list = ordered_json::array();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const RunResult& job = jobs[j];
    job_list.push_back({
        {"name", job.cluster_job},
        {"file", job.scenario.path},
        {"results", ClusterJobResultsFile(job.cluster_job)},
        {"status", RunStatus(job)},
        {"world_size", job.scenario.job.world_size},
        {"first_rank", facts[j].first_rank},
        {"hosts", facts[j].host_names},
        {"start_s", job.scenario.job.start_s},
        {"iterations", job.summary.iterations.size()},
        {"end_s", job.summary.end_s},
        {"steady_iteration_time_s", SteadyIterationTime(job.summary)},
        {"steady_exposed_comm_s", SteadyExposedComm(job.summary)},
        {"alone_steady_iteration_time_s", OrNull(facts[j].alone_steady_s)},
        {"slowdown", OrNull(Slowdown(SteadyIterationTime(job.summary), facts[j].alone_steady_s))},
    });
  }
  const ordered_json document = {
      {"status", RunStatus(cluster)},
      {"scenario", {{"path", cluster.scenario.path}, {"settings", std::move(settings)}}},
      {"topology",
       {{"description", cluster.topology_description},
        {"hosts", cluster.hosts},
        {"switches", cluster.switches},
        {"links", cluster.links}}},
      {"jobs", std::move(job_list)},
      {"network", NetworkJson(cluster)},
      {"simulation", {{"events", cluster.events}, {"simulated_s", cluster.simulated_s}}},
  };
  return document.dump(2) + "\n";
}

}  // namespace nbox::cosim
