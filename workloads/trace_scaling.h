// Record small, run large: a collective trace recorded on a few ranks (collective_trace.h) as
// the same job on another number of ranks. The rules (workloads/README.md, "Scaling a recorded
// trace"), for the data-parallel job one world communicator records:
//
//   - rank r of the scaled job runs what recorded rank r mod n ran: the same collectives at
//     the same times, so the compute between them stays per rank (weak scaling: each rank
//     keeps its batch);
//   - an all-reduce, broadcast or reduce keeps its bytes (the buffer is the model's: gradients,
//     parameters), a broadcast or reduce its root (which must be a rank of the scaled job);
//   - an all-gather's output and a reduce-scatter's input (nbox's size of both) follow the
//     chosen rule: kFixedTotal keeps them (ZeRO and FSDP shard model state: the gathered
//     tensor is the model's, each rank's shard shrinks to 1/W of it) and kFixedPerRank keeps
//     each rank's part (a rank's own data: the gathered tensor grows to W parts).
#pragma once

#include <string_view>

#include "workloads/collective_trace.h"

namespace nbox::work {

enum class TraceScaling {
  kNone,          // the job must have the trace's number of ranks
  kFixedTotal,    // all-gather output and reduce-scatter input kept
  kFixedPerRank,  // each rank's part of them kept
};

// "none", "fixed-total", "fixed-per-rank": the scenario key's values.
std::string_view ToString(TraceScaling scaling);
// Throws std::invalid_argument for another name.
TraceScaling TraceScalingFromString(std::string_view name);

// `trace` as a job of `world_size` ranks by the rules above (the trace itself when the sizes
// agree). Throws TraceError naming the file: kNone with another world size, world_size < 1, a
// root that is not a rank of the scaled job, a gathered collective grown past 16 GiB.
CollectiveTrace ScaleCollectiveTrace(const CollectiveTrace& trace, int world_size,
                                     TraceScaling scaling);

}  // namespace nbox::work
