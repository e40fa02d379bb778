// What every rank of a job does: the program model (workloads/README.md, "The program model").
//
// A rank has one compute stream and any number of communication streams. The compute stream
// runs the program's ops in order: a compute op keeps it busy for its duration; a
// communication op (a collective, or a group of point-to-point transfers) is only *issued*:
// it costs no time there and joins the communication stream it names, which runs its ops one
// at a time in issue order (like NCCL kernels on one CUDA stream); a wait op blocks the
// compute stream until one issued op, one stream, or every stream is done.
//
// Communication ops run on a communicator: a group of ranks split from the world, as NCCL
// communicators are. A program names communicators by *slot* (0, 1, ...), and the job says
// which communicator each slot is for each rank, so the ranks that play the same part (every
// rank of one pipeline stage, say) share one program while each talks in its own groups.
// Slot 0 is the world, unless a job says otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/point_to_point.h"
#include "collectives/schedule.h"
#include "workloads/compute_model.h"

namespace nbox::work {

// What a communicator's traffic is for; reports split exposed communication by it.
enum class Parallelism : uint8_t {
  kTensor,     // tensor-parallel activations (Megatron's f and g operators)
  kPipeline,   // activations and their gradients between pipeline stages
  kData,       // gradient all-reduce or reduce-scatter, parameter all-gather (ZeRO, FSDP)
  kExpert,     // mixture-of-experts token all-to-all
  kEmbedding,  // DLRM's model-parallel embedding exchange (all-to-all)
  kContext,    // context parallelism: keys and values around the ring of a sequence's ranks
  kOther,      // anything else (a recorded trace's collectives, the world's small syncs)
};
inline constexpr int kParallelismCount = 7;

// The largest collective (nccl-tests' size) a workload may issue, from any source: the
// largest workload.bucket, and the limit a collective trace's sizes are held to (a trace
// claiming 4 TB ran for ever).
inline constexpr uint64_t kMaxCollectiveBytes = uint64_t{16} << 30;

std::string_view ToString(Parallelism parallelism);  // "tp", "pp", "dp", "ep", "emb", "cp", "other"

enum class OpKind : uint8_t {
  kIterationBegin,  // marker: iteration `iteration` starts (costs nothing)
  kCompute,         // busy for duration_s
  kCollective,      // issue `collective` on communicator slot `comm`, stream `stream`
  kTransfers,       // issue the point-to-point `transfers` (one group) on `comm`, `stream`
  kWait,            // wait until the communication op at index `target` has completed
  kWaitStream,      // wait until every op issued so far on stream `stream` has completed
  kWaitAll,         // wait until every op issued so far on every stream has completed
  kIterationEnd,    // marker: iteration `iteration` ends
};

// Sizes of an all-to-all-v over a communicator: group size squared, row-major by sender, in
// bytes. Shared by every op (and every rank) that moves the same pattern.
using AllToAllCounts = std::shared_ptr<const std::vector<uint64_t>>;

struct Op {
  OpKind kind = OpKind::kCompute;
  int iteration = 0;
  int microbatch = -1;    // the pipeline micro-batch the op belongs to; -1 = none
  std::string label;      // "fwd L3", "tp allreduce", "allreduce bucket 2"; markers: ""
  double duration_s = 0;  // kCompute
  // kCompute: what the duration is spent on, by kind of kernel, where the workload times its
  // compute per operation (compute_model.h); all zero where it does not say.
  ComputeCost cost;
  // kCollective: the operation and its size (nccl-tests' convention, collectives/schedule.h);
  // kAllToAllV takes `counts` instead of `bytes`.
  coll::CollectiveOp collective = coll::CollectiveOp::kAllReduce;
  uint64_t bytes = 0;
  int root = 0;  // kBroadcast, kReduce: the communicator rank at the chain's or trees' root
  // kCollective: the size of its data type, on whose boundaries channels and chunks cut the
  // buffer (a recorded call says it); 0 = the job's (the communicators' element size).
  uint32_t element_bytes = 0;
  AllToAllCounts counts;
  std::vector<coll::Transfer> transfers;  // kTransfers: peers are ranks of the communicator
  int comm = 0;                           // kCollective, kTransfers: communicator slot
  int stream = 0;                         // kCollective, kTransfers, kWaitStream
  uint32_t target = 0;                    // kWait: index in `ops` of an earlier comm op
};

struct RankProgram {
  std::vector<Op> ops;
  int iterations = 0;
};

// A communicator: which world ranks it holds, in the order of their rank in it.
struct Communicator {
  std::string name;  // "world", "tp3", "dp0", ...
  Parallelism parallelism = Parallelism::kOther;
  std::vector<int> ranks;  // world ranks; index = rank in the communicator
  // Its members are in different pipeline stages: a wait on it before the peers were ready
  // (another stage still computing) is pipeline bubble, not communication.
  bool crosses_stages = false;
};

// The programs of a whole job.
struct JobPrograms {
  std::vector<Communicator> communicators;
  // rank_comms[r][slot]: the communicator (index into `communicators`) slot `slot` of rank
  // r's program means. Every rank a program's ops name must be a member.
  std::vector<std::vector<int>> rank_comms;
  // One per rank; ranks playing the same part share one.
  std::vector<std::shared_ptr<const RankProgram>> programs;
  // Names of the communication streams, for reports and traces ("dp", "tp", ...).
  std::vector<std::string> stream_names;

  int world_size() const { return static_cast<int>(programs.size()); }
};

// Every rank runs `program` with slot 0 = a world communicator of `parallelism` and one
// communication stream named `stream_name`.
JobPrograms SameProgramEverywhere(int world_size, std::shared_ptr<const RankProgram> program,
                                  Parallelism parallelism, std::string stream_name);

// `program` run `times` times one after another: copy k's iterations follow copy k-1's
// (numbered on from program.iterations x k) and its waits name its own ops. times >= 1
// (std::invalid_argument otherwise).
RankProgram RepeatProgram(const RankProgram& program, int times);

// Checks that the programs fit together: slots name existing communicators the rank is a
// member of, transfers name ranks of the communicator, waits name earlier communication ops,
// streams exist, every communicator is used on one stream by each rank, collectives have a
// size. Throws std::invalid_argument naming the rank, the op and the problem.
void ValidateJobPrograms(const JobPrograms& job);

// The rank of world rank `world_rank` in `communicator`, or -1 when it is not a member.
int RankIn(const Communicator& communicator, int world_rank);

// What a program communicates, each distinct thing once: one op of each distinct collective
// (by communicator slot, operation, bytes, root, element size and all-to-all counts), in
// program order, and the (communicator slot, peer's rank in it) pairs it sends to. Ranks of a
// stage share their program, so a job's connections are found from these, once per program,
// rather than from every op of every rank.
struct ProgramCommunication {
  std::vector<const Op*> collectives;
  std::vector<std::pair<int, int>> sends;
};
ProgramCommunication DistinctCommunication(const RankProgram& program);

}  // namespace nbox::work
