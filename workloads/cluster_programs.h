// Several jobs' programs as the programs of one job of all their ranks, so that jobs sharing a
// fabric run on one runtime and one transport: job j's rank r becomes rank first_rank[j] + r,
// and its communicators, named and used as before, hold those ranks (docs/CLUSTERS.md).
#pragma once

#include <vector>

#include "workloads/program.h"

namespace nbox::work {

struct ClusterPrograms {
  JobPrograms programs;
  std::vector<int> first_rank;  // per job: its rank 0 among the cluster's ranks
};

// The jobs' programs, one after another. Communicator 0 holds every rank (the runtime's world,
// which no op uses: no job's collective ever spans two jobs); then each job's communicators
// in order. Streams of the same name are one stream (a job's "dp" and another's "dp" are
// reported together by name, and each rank runs only its own job's ops on them); a job whose
// streams are not a prefix of the earlier jobs' gets copies of its programs with its streams
// renumbered. Throws std::invalid_argument for no jobs or a job without ranks.
ClusterPrograms MergeClusterPrograms(const std::vector<const JobPrograms*>& jobs);

}  // namespace nbox::work
