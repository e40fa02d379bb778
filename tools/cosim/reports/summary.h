// Aggregates what the simulated ranks recorded into the figures a report shows.
//
// Definitions (also in the README):
// - iteration i ends at the latest rank's end of i; its time runs from the end of i - 1 (the
//   first's from the earliest rank's start), so iterations that overlap, because a rank left
//   i - 1 early, do not count the overlap twice (start_s: the earliest rank's start of i);
// - its compute time is the largest per-rank sum of compute in i (ranks of a DDP job are
//   identical, so this is every rank's compute);
// - exposed communication = iteration time - compute time: what overlapping failed to hide;
// - a collective instance (one label in one iteration on one communicator) runs from the
//   earliest rank's start to the latest rank's end (time_s); it runs for the network from the
//   latest rank's start (all_started_s; for point-to-point transfers, or the peer's post of
//   what a rank receives, if later) to that end (run_s), which is what nccl-tests times
//   (its ranks start together after a barrier): algbw = bytes / run_s and busbw = algbw * the
//   nccl-tests factor (1 for point-to-point transfers). all_started_s - start_s is how long
//   the first member waited for the last one (a late peer: pipeline bubble, load imbalance);

// - the breakdown of an iteration splits every simulated rank's time in it into compute, the
//   waits of its compute stream on communication by parallelism (tp, pp, dp, ep, emb, cp, other),
//   pipeline bubble and idle (the time the rank was not in the iteration: it started later or
//   ended earlier than the slowest rank), and reports the mean over the ranks, so the parts
//   add up to the iteration time.
// All times are seconds since the job start (every connection established).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ns3/nbox-job-records.h"

namespace nbox::cosim {

// Means over the ranks that ran a program in the iteration; they add up to its time.
struct IterationBreakdown {
  int ranks = 0;  // ranks with compute or waits recorded in the iteration
  double compute_s = 0;
  // compute_s by kind of kernel, where the workload times compute per operation (all zero
  // where it does not say: compute_model.h).
  work::ComputeCost compute_by_kind;
  std::array<double, work::kParallelismCount> exposed_s{};  // indexed by work::Parallelism
  double bubble_s = 0;
  double idle_s = 0;
};

struct IterationSummary {
  int index = 0;
  double start_s = 0;
  double end_s = 0;
  double time_s = 0;
  double compute_s = 0;       // the busiest rank's compute
  double exposed_comm_s = 0;  // time_s - compute_s: what the busiest rank did not hide
  IterationBreakdown breakdown;
};

struct CollectiveSummary {
  int iteration = 0;
  std::string label;
  std::string group;  // the communicator's name
  work::Parallelism parallelism = work::Parallelism::kOther;
  bool is_transfers = false;  // point-to-point (op is then meaningless)
  coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
  coll::Algorithm algorithm = coll::Algorithm::kRing;  // collectives: what ran it
  coll::Protocol protocol = coll::Protocol::kIdeal;    // and at what protocol's cost
  uint64_t bytes = 0;
  int ranks = 0;
  double start_s = 0;        // the first member's start
  double all_started_s = 0;  // the last member's start
  double end_s = 0;          // the last member's end
  double time_s = 0;         // end_s - start_s
  double run_s = 0;          // end_s - all_started_s: what algbw and busbw divide by
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

struct JobSummary {
  double job_start_s = 0;  // absolute simulated time when ranks began (connection setup)
  std::vector<IterationSummary> iterations;
  std::vector<CollectiveSummary> collectives;  // by iteration, then start time, then label
  double end_s = 0;                            // last iteration's end
};

// The collectives of one iteration of one parallelism, op and size, taken together: how many
// instances, their mean run time, late start and bandwidths (the terminal's table when
// instances are many).
struct CollectiveGroupSummary {
  work::Parallelism parallelism = work::Parallelism::kOther;
  bool is_transfers = false;
  coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
  coll::Algorithm algorithm = coll::Algorithm::kRing;  // collectives: what ran it
  uint64_t bytes = 0;
  int ranks = 0;
  int count = 0;
  double mean_run_s = 0;
  double mean_late_s = 0;  // all_started_s - start_s
  double mean_algbw_bytes_per_s = 0;
  double mean_busbw_bytes_per_s = 0;
};

// The ranks a summary covers: first .. first + count - 1 (a cluster's job); all by default.
struct RankRange {
  uint32_t first = 0;
  uint32_t count = UINT32_MAX;
  bool Contains(uint32_t rank) const { return rank >= first && rank - first < count; }
};

JobSummary Summarize(const ns3::NboxJobRecords& records, RankRange ranks = {});

// Groups `iteration`'s collectives by (parallelism, kind, op, bytes, ranks), in that order.
std::vector<CollectiveGroupSummary> GroupCollectives(const JobSummary& summary, int iteration);

// "AllReduce", or "SendRecv" for point-to-point transfers.
std::string OpName(bool is_transfers, coll::CollectiveOp op);

// Mean iteration time over the iterations after the first (the first is a warm-up: TCP
// windows open during it); the only iteration's time when there is one.
double SteadyIterationTime(const JobSummary& summary);
// The same mean for exposed communication.
double SteadyExposedComm(const JobSummary& summary);

}  // namespace nbox::cosim
