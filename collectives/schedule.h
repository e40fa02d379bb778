// A collective as a per-rank DAG of point-to-point steps.
//
// This is the one description of "who sends what to whom, after what" that both a simulated
// rank (ns3-module) and, later, a real rank (bridge/) execute, so both always agree on every
// message. Nothing here knows about time, ns-3 or sockets.
//
// Matching rule: the n-th Send from rank a to rank b on channel c matches the n-th Recv on
// rank b from rank a on channel c, counted across all collectives run in order on one
// communicator. A transport that is FIFO per (src, dst, channel) therefore needs no tags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nbox::coll {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter };
enum class Algorithm { kRing };

std::string_view ToString(CollectiveOp op);
std::string_view ToString(Algorithm algorithm);

// The size convention is nccl-tests': `bytes` is the all-reduce buffer, the all-gather
// output (each rank contributes bytes / world_size), the reduce-scatter input (each rank
// keeps bytes / world_size).
struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  int world_size = 1;          // ranks in the group; schedule ranks are 0..world_size-1
  uint64_t bytes = 0;          // see above
  uint32_t element_bytes = 4;  // regions are split on element boundaries
  int channels = 1;            // parallel rings, each moving a contiguous 1/channels slice
  uint64_t chunk_bytes = 0;    // pipelining unit inside a ring step; 0 = no chunking
};

enum class StepKind { kSend, kRecv };

struct Step {
  uint32_t id = 0;  // index into RankSchedule::steps
  StepKind kind = StepKind::kSend;
  int peer = 0;  // group rank of the other side
  int channel = 0;
  uint64_t offset = 0;  // byte offset of the region in this rank's buffer
  uint64_t bytes = 0;   // size of the region (and of the message)
  bool reduce = false;  // Recv only: accumulate into the region instead of overwriting it
  std::vector<uint32_t> deps;  // steps of this rank that must complete before this starts
};

struct RankSchedule {
  int rank = 0;
  uint64_t buffer_bytes = 0;  // size of the working buffer the offsets index
  std::vector<Step> steps;
};

struct Schedule {
  CollectiveSpec spec;
  std::vector<RankSchedule> ranks;  // ranks[r].rank == r
};

// Builds the schedule, or throws std::invalid_argument naming the bad field.
Schedule BuildSchedule(const CollectiveSpec& spec);

// nccl-tests' bus bandwidth factor: busbw = algbw * factor (2(n-1)/n for all-reduce,
// (n-1)/n for all-gather and reduce-scatter).
double BusBandwidthFactor(CollectiveOp op, int world_size);

}  // namespace nbox::coll
