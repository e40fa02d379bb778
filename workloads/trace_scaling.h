// Record small, run large: a collective trace recorded on a few ranks (collective_trace.h) as
// the same job on another number of ranks. The rules (workloads/README.md, "Scaling a recorded
// trace") grow data parallelism: the recorded n ranks are n / R model replicas of R consecutive
// ranks (R = tensor x pipeline ranks, Megatron's order; R = 1 for a data-parallel job), the
// scaled job has W / R of them:
//
//   - rank r of the scaled job is place r % R of replica r / R, and runs what the same place of
//     recorded replica (r / R) mod (n / R) ran: the same collectives at the same times, so the
//     compute between them stays per rank (each replica keeps its batch);
//   - a communicator inside one replica (tensor-, pipeline-parallel groups) is copied into
//     every replica that copies its replica, sizes unchanged;
//   - a communicator made of the same places of every replica (the world, data-parallel
//     groups) is widened to those places of every scaled replica; an all-reduce, broadcast or
//     reduce on it keeps its bytes (the buffer is the model's: gradients, parameters), a
//     broadcast or reduce its root (a rank of the communicator, which must still be one);
//   - an all-gather's output and a reduce-scatter's input (nbox's size of both) on a widened
//     communicator follow the chosen rule: kFixedTotal keeps them (ZeRO and FSDP shard model
//     state: the gathered tensor is the model's, each rank's shard shrinks to 1/W of it) and
//     kFixedPerRank keeps each rank's part (a rank's own data: the gathered tensor grows);
//   - any other communicator (one spanning some replicas, or places that differ between
//     replicas) is refused.
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

// `trace` as a job of `world_size` ranks by the rules above, with replicas of `replica_ranks`
// (the trace itself when the sizes agree). Throws TraceError naming the file: kNone with
// another world size, world_size < 1, replicas that do not divide both sizes, a communicator
// the rules cannot scale (naming its first line), a root that is no longer a rank of its
// communicator, a gathered collective grown past 16 GiB.
CollectiveTrace ScaleCollectiveTrace(const CollectiveTrace& trace, int world_size,
                                     TraceScaling scaling, int replica_ranks = 1);

}  // namespace nbox::work
