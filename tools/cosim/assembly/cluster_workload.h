// The workload of a cluster scenario: every job's programs built from its own scenario (the
// cluster file with its job file over it) and run as one job of all their ranks
// (work::MergeClusterPrograms), with what each job keeps of its own (docs/CLUSTERS.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cosim/assembly/workload_registry.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// One job of a cluster, as assembled: the cluster's ranks first_rank .. first_rank +
// world_size() - 1 are its ranks 0 .. world_size() - 1.
struct ClusterJob {
  std::string name;             // its file's name (scenario::ClusterJobName)
  scenario::Scenario scenario;  // the cluster file with the job file over it
  int first_rank = 0;
  int communicators = 0;  // its communicators, one after another among the cluster's
  Workload workload;      // its description, model and details; its programs are the cluster's
  int world_size() const { return scenario.job.world_size; }
};

struct ClusterWorkload {
  Workload workload;  // every job's programs as one job's (what it describes is each job's)
  std::vector<ClusterJob> jobs;
};

// Builds each of `jobs` (LoadClusterJobs) with `build` (BuildWorkloadWithin's: a job whose
// programs outgrow the memory left is refused) and merges their programs.
ClusterWorkload BuildClusterWorkload(const std::vector<scenario::Scenario>& jobs,
                                     Workload (*build)(const scenario::Scenario&, uint64_t),
                                     uint64_t room_bytes);

}  // namespace nbox::cosim
