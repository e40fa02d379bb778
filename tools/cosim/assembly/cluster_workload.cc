#include "tools/cosim/assembly/cluster_workload.h"

#include <utility>

#include "workloads/cluster_programs.h"

namespace nbox::cosim {

ClusterWorkload BuildClusterWorkload(const std::vector<scenario::Scenario>& jobs,
                                     Workload (*build)(const scenario::Scenario&, uint64_t),
                                     uint64_t room_bytes) {
  ClusterWorkload cluster;
  std::vector<const work::JobPrograms*> programs;
  for (const scenario::Scenario& s : jobs) {
    ClusterJob job;
    job.name = scenario::ClusterJobName(s.path);
    job.scenario = s;
    job.workload = build(s, room_bytes);
    cluster.jobs.push_back(std::move(job));
  }
  for (const ClusterJob& job : cluster.jobs) programs.push_back(&job.workload.programs);
  work::ClusterPrograms merged = work::MergeClusterPrograms(programs);
  for (size_t j = 0; j < cluster.jobs.size(); ++j) {
    ClusterJob& job = cluster.jobs[j];
    job.first_rank = merged.first_rank[j];
    job.communicators = static_cast<int>(job.workload.programs.communicators.size());
    job.workload.programs = {};  // now the cluster's
  }
  cluster.workload.programs = std::move(merged.programs);
  return cluster;
}

}  // namespace nbox::cosim
