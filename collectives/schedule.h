// A collective as a per-rank DAG of point-to-point steps.
//
// This is the one description of "who sends what to whom, after what" that both a simulated
// rank (ns3-module) and, later, a real rank (bridge/) execute, so both always agree on every
// message. Nothing here knows about time, ns-3 or sockets.
//
// Matching rule: the n-th Send from rank a to rank b on channel c matches the n-th Recv on
// rank b from rank a on channel c, counted across all collectives run in order on one
// communicator. "n-th" is in step id order within a RankSchedule. A transport that is FIFO
// per (src, dst, channel) therefore needs no tags, provided each rank hands the Sends of one
// connection to it in id order (StepTracker::TakeReady guarantees that). Matched steps always
// have the same size; steps of zero bytes are never emitted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nbox::coll {

// One byte each (like the enums below): records of millions of collectives hold them.
enum class CollectiveOp : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,   // every rank sends an equal share of its buffer to every rank
  kAllToAllV,  // every rank sends counts[src][dst] bytes to every rank
  kReduce,     // the sum of every rank's buffer at the root (appended: ops are numbered)
};
// kRing: NCCL's ring (ring.h). kHierarchical: all-reduce in three phases over servers
// (hierarchical.h), or all-to-all through the rail-aligned peer (all_to_all.h); needs
// ranks_per_server. kDirect: every rank exchanges with every peer at once (all_to_all.h; for
// all-reduce, reduce-scatter and all-gather direct.h). kHalvingDoubling: recursive halving
// (reduce-scatter), recursive doubling (all-gather), both in turn (Rabenseifner's all-reduce;
// halving_doubling.h). kTree: NCCL's double binary tree all-reduce, and the two-tree broadcast
// and reduce (tree.h). Broadcast and reduce on kRing are the ring's chains (chain.h).
enum class Algorithm : uint8_t { kRing, kHierarchical, kDirect, kHalvingDoubling, kTree };

// How a collective's data moves between GPUs (protocol.h): NCCL's LL, LL128 or Simple, each with
// its latencies and share of the links' rate, or kIdeal: at the links' rate with no latency but
// the network's. A schedule is the same under every protocol; only its timing differs.
enum class Protocol : uint8_t { kIdeal, kLl, kLl128, kSimple };

std::string_view ToString(CollectiveOp op);
std::string_view ToString(Algorithm algorithm);
std::string_view ToString(Protocol protocol);  // "ideal", "LL", "LL128", "Simple"

// Broadcast and reduce: the collectives with a root (CollectiveSpec::root).
bool IsRooted(CollectiveOp op);
// All-gather and reduce-scatter: `bytes` is every rank's part together (NCCL counts one part).
bool IsGathered(CollectiveOp op);

// The size convention is nccl-tests': `bytes` is the all-reduce buffer, the all-gather
// output (each rank contributes bytes / world_size), the reduce-scatter input (each rank
// keeps bytes / world_size). Every rank works in place on one buffer of `bytes` bytes:
//   AllReduce:     the buffer holds the rank's input before and the sum of all inputs after.
//   AllGather:     before, rank r's contribution sits at RankSegment(spec, r) of its buffer
//                  (the rest is overwritten); after, every segment holds its owner's data.
//   ReduceScatter: before, the buffer is the rank's whole input; after, RankSegment(spec, r)
//                  of rank r's buffer holds the sum over ranks of that segment (the rest of
//                  the buffer holds partial sums and is not meaningful).
//   Broadcast:     before, the buffer of rank `root` holds the data (the others' are
//                  overwritten); after, every rank's buffer holds it.
//   Reduce:        before, the buffer is the rank's input; after, rank `root`'s buffer holds
//                  the sum of all inputs (the others' hold partial sums, not meaningful).
//   AllToAll:      `bytes` is each rank's send buffer (nccl-tests' size); segment d of it
//                  goes to rank d. The schedule's buffer is the send buffer followed by the
//                  receive buffer, whose segment s holds what rank s sent (all_to_all.h).
//   AllToAllV:     `bytes` is unused (0); `counts` gives the bytes of every pair.
// When bytes is not a multiple of world_size * element_bytes, segments differ by at most one
// element (the first ones are longer); see RankSegment.
struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kIdeal;  // the schedule's timing only
  int world_size = 1;          // ranks in the group; schedule ranks are 0..world_size-1
  uint64_t bytes = 0;          // see above; a multiple of element_bytes
  uint32_t element_bytes = 4;  // regions are split on element boundaries
  int channels = 1;            // parallel rings, each moving a contiguous 1/channels slice
  uint64_t chunk_bytes = 0;    // pipelining unit inside a ring step; 0 = no chunking
  int root = 0;  // Broadcast: the rank whose data every rank receives; Reduce: the one that sums
  // Ranks per scale-up server (GPUs on one NVSwitch), placed server-major: rank r is local
  // GPU r % n of server r / n. 0 = no servers known. When > 0, world_size must be a multiple
  // of it; rings then keep each server's ranks consecutive and cross between servers only
  // between GPUs of the same local index (ring_order.h), and kHierarchical may be used.
  // Broadcast and reduce ignore it.
  int ranks_per_server = 0;
  // AllToAllV only: world_size x world_size bytes, row-major by sender
  // (counts[src * world_size + dst]), each a multiple of element_bytes. Shared, not copied:
  // every rank of the group builds its schedule from the same matrix.
  std::shared_ptr<const std::vector<uint64_t>> counts;
};

// Limits that keep a bad spec from exhausting memory (BuildRankSchedule is O(steps)).
inline constexpr int kMaxWorldSize = 1 << 17;
inline constexpr int kMaxChannels = 64;  // NCCL's MAXCHANNELS
inline constexpr uint64_t kMaxStepsPerRank = uint64_t{1} << 24;

enum class StepKind { kSend, kRecv };

struct Step {
  uint32_t id = 0;  // index into RankSchedule::steps
  StepKind kind = StepKind::kSend;
  int peer = 0;  // group rank of the other side
  int channel = 0;
  uint64_t offset = 0;         // byte offset of the region in this rank's buffer
  uint64_t bytes = 0;          // size of the region (and of the message); never 0
  bool reduce = false;         // Recv only: accumulate into the region instead of overwriting it
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

// Throws std::invalid_argument naming the bad field ("CollectiveSpec.channels: ...").
void ValidateSpec(const CollectiveSpec& spec);

// Builds the schedule of every rank, or throws std::invalid_argument naming the bad field.
Schedule BuildSchedule(const CollectiveSpec& spec);
// Builds one rank's schedule (what a single real or simulated rank needs); identical to
// BuildSchedule(spec).ranks[rank].
RankSchedule BuildRankSchedule(const CollectiveSpec& spec, int rank);

// About the most steps BuildRankSchedule(spec, r) has for any rank r, computed without
// building it: each algorithm's own bound, the one its builder checks against
// kMaxStepsPerRank; for kAllToAll a Send and a Recv per chunk of the buffer, twice that for the
// hierarchical one (the pieces a rank relays). Not for kAllToAllV, whose `bytes` are 0 and whose
// rows differ: AllToAllStepCount (all_to_all.h) counts a rank's steps, and HeldStepBound
// (step_source.h), what a run's memory estimate counts, uses it for every all-to-all.
// `spec` must be valid.
uint64_t ScheduleStepBound(const CollectiveSpec& spec);

// A byte range [offset, offset + bytes) of a rank's buffer.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Segment `rank` of the buffer: the bytes cut on element boundaries into world_size
// contiguous parts in rank order, the first (bytes / element_bytes) % world_size of them one
// element longer. It is where rank r's AllGather contribution sits and where its
// ReduceScatter result ends.
ByteRange RankSegment(const CollectiveSpec& spec, int rank);

// nccl-tests' bus bandwidth factor: busbw = algbw * factor (2(n-1)/n for all-reduce,
// (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce). Throws
// std::invalid_argument if n < 1.
double BusBandwidthFactor(CollectiveOp op, int world_size);

}  // namespace nbox::coll
