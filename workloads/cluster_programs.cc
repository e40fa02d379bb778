#include "workloads/cluster_programs.h"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace nbox::work {
namespace {

// The cluster's stream index of each of `names`, adding the names it has not seen.
std::vector<int> StreamIndices(const std::vector<std::string>& names,
                               std::vector<std::string>& cluster_names) {
  std::vector<int> indices;
  for (const std::string& name : names) {
    const auto found = std::find(cluster_names.begin(), cluster_names.end(), name);
    indices.push_back(static_cast<int>(found - cluster_names.begin()));
    if (found == cluster_names.end()) cluster_names.push_back(name);
  }
  return indices;
}

// `program` with every stream index s read as indices[s].
RankProgram WithStreams(const RankProgram& program, const std::vector<int>& indices) {
  RankProgram renumbered = program;
  for (Op& op : renumbered.ops) {
    if (op.kind == OpKind::kCollective || op.kind == OpKind::kTransfers ||
        op.kind == OpKind::kWaitStream) {
      op.stream = indices.at(static_cast<size_t>(op.stream));
    }
  }
  return renumbered;
}

}  // namespace

ClusterPrograms MergeClusterPrograms(const std::vector<const JobPrograms*>& jobs) {
  if (jobs.empty()) throw std::invalid_argument("MergeClusterPrograms: no jobs");
  ClusterPrograms cluster;
  JobPrograms& merged = cluster.programs;
  merged.communicators.push_back({"cluster", Parallelism::kOther, {}, false});
  for (const JobPrograms* job : jobs) {
    if (job->world_size() == 0) {
      throw std::invalid_argument("MergeClusterPrograms: a job without ranks");
    }
    const int first_rank = merged.world_size();
    const int first_communicator = static_cast<int>(merged.communicators.size());
    cluster.first_rank.push_back(first_rank);
    for (Communicator communicator : job->communicators) {
      for (int& rank : communicator.ranks) rank += first_rank;
      merged.communicators.push_back(std::move(communicator));
    }
    const std::vector<int> streams = StreamIndices(job->stream_names, merged.stream_names);
    bool renumbered = false;
    for (size_t s = 0; s < streams.size(); ++s) renumbered |= streams[s] != static_cast<int>(s);
    // Ranks of a stage share one program: they share its renumbered copy too.
    std::map<const RankProgram*, std::shared_ptr<const RankProgram>> copy_of;
    for (int rank = 0; rank < job->world_size(); ++rank) {
      std::shared_ptr<const RankProgram> program = job->programs[static_cast<size_t>(rank)];
      if (renumbered && program) {
        auto [it, added] = copy_of.try_emplace(program.get());
        if (added) it->second = std::make_shared<const RankProgram>(WithStreams(*program, streams));
        program = it->second;
      }
      merged.programs.push_back(std::move(program));
      std::vector<int> slots = job->rank_comms[static_cast<size_t>(rank)];
      for (int& slot : slots) slot += first_communicator;
      merged.rank_comms.push_back(std::move(slots));
    }
  }
  for (int rank = 0; rank < merged.world_size(); ++rank) {
    merged.communicators.front().ranks.push_back(rank);
  }
  return cluster;
}

}  // namespace nbox::work
