// Aggregates what the simulated ranks recorded into the figures a report shows.
//
// Definitions (also in the README):
// - iteration i runs from the earliest rank's start of i to the latest rank's end of i;
// - its compute time is the largest per-rank sum of compute in i (ranks of a DDP job are
//   identical, so this is every rank's compute);
// - exposed communication = iteration time - compute time: what overlapping failed to hide;
// - a collective instance (one label in one iteration) runs from the earliest rank's start
//   to the latest rank's end; algbw = bytes / time and busbw = algbw * the nccl-tests factor.
// All times are seconds since the job start (every connection established).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ns3/nbox-job-records.h"

namespace nbox::cosim {

struct IterationSummary {
  int index = 0;
  double start_s = 0;
  double end_s = 0;
  double time_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
};

struct CollectiveSummary {
  int iteration = 0;
  std::string label;
  coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
  uint64_t bytes = 0;
  int ranks = 0;
  double start_s = 0;
  double end_s = 0;
  double time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

struct JobSummary {
  double job_start_s = 0;  // absolute simulated time when ranks began (connection setup)
  std::vector<IterationSummary> iterations;
  std::vector<CollectiveSummary> collectives;  // by iteration, then start time, then label
  double end_s = 0;                            // last iteration's end
};

JobSummary Summarize(const ns3::NboxJobRecords& records);

// Mean iteration time over the iterations after the first (the first is a warm-up: TCP
// windows open during it); the only iteration's time when there is one.
double SteadyIterationTime(const JobSummary& summary);
// The same mean for exposed communication.
double SteadyExposedComm(const JobSummary& summary);

}  // namespace nbox::cosim
