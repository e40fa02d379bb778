#include "workloads/trace_replay.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

#include "workloads/ops.h"

namespace nbox::work {
namespace {

void AppendCompute(uint64_t ns, size_t index, int iteration, RankProgram* program) {
  if (ns == 0) return;
  program->ops.push_back(ComputeOp(iteration, fmt::format("compute before trace #{}", index),
                                   static_cast<double>(ns) * 1e-9));
}

// The label of a collective, the same on every member: its place in its communicator's
// sequence (with one communicator, the rank's whole sequence: "trace #3 AllReduce").
std::string CollectiveLabel(const CollectiveTrace& trace, const TraceCollective& c, int place) {
  if (trace.communicators.size() == 1) {
    return fmt::format("trace #{} {}", place, coll::ToString(c.op));
  }
  return fmt::format("trace {} #{} {}", CommunicatorName(c.comm), place, coll::ToString(c.op));
}

// `comm` (an index of trace.communicators) -> the slot of rank r's program that names it.
using Slots = std::map<int, int>;

void AppendIteration(const CollectiveTrace& trace, const std::vector<TraceCollective>& collectives,
                     const Slots& slots, int iteration, RankProgram* program) {
  std::map<int, int> place_on_comm;
  program->ops.push_back(MarkerOp(OpKind::kIterationBegin, iteration));
  for (size_t i = 0; i < collectives.size(); ++i) {
    const TraceCollective& c = collectives[i];
    if (i > 0) {
      const TraceCollective& previous = collectives[i - 1];
      if (c.start_ns >= previous.end_ns) {
        program->ops.push_back(WaitAllOp(iteration));
        AppendCompute(c.start_ns - previous.end_ns, i, iteration, program);
      } else {
        AppendCompute(c.start_ns - previous.start_ns, i, iteration, program);
      }
    }
    // The same label on every rank (their sequences are the same), so reports group the
    // ranks' parts of one collective.
    const int slot = slots.at(c.comm);
    Op collective = CollectiveOp(iteration, CollectiveLabel(trace, c, place_on_comm[c.comm]++),
                                 c.op, c.bytes, slot, /*stream=*/slot);
    collective.root = c.root;
    collective.element_bytes = c.element_bytes;
    program->ops.push_back(std::move(collective));
  }
  program->ops.push_back(WaitAllOp(iteration));
  program->ops.push_back(MarkerOp(OpKind::kIterationEnd, iteration));
}

}  // namespace

std::string CommunicatorName(int comm) {
  return comm == 0 ? "world" : fmt::format("comm{}", comm);
}

JobPrograms MakeTraceReplayJob(const CollectiveTrace& trace, int iterations) {
  if (iterations < 1) {
    throw std::invalid_argument(
        fmt::format("a trace replay needs at least one iteration (got {})", iterations));
  }
  JobPrograms job;
  for (size_t c = 0; c < trace.communicators.size(); ++c) {
    Communicator comm;
    comm.name = CommunicatorName(static_cast<int>(c));
    comm.ranks = trace.communicators[c].ranks;
    job.communicators.push_back(std::move(comm));
    // One stream per communicator, as PyTorch gives each process group its own NCCL stream.
    job.stream_names.push_back(trace.communicators.size() == 1 ? "collectives"
                                                               : job.communicators.back().name);
  }
  // Each rank's communicators from their members (a scan of every communicator per rank is
  // W^2 for a trace scaled to thousands of ranks).
  job.rank_comms.resize(trace.ranks.size());
  for (size_t c = 0; c < job.communicators.size(); ++c) {
    for (int rank : job.communicators[c].ranks) {
      job.rank_comms[static_cast<size_t>(rank)].push_back(static_cast<int>(c));
    }
  }
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    Slots slots;
    for (size_t slot = 0; slot < job.rank_comms[r].size(); ++slot) {
      slots[job.rank_comms[r][slot]] = static_cast<int>(slot);
    }
    auto program = std::make_shared<RankProgram>();
    program->iterations = iterations;
    for (int iteration = 0; iteration < iterations; ++iteration) {
      AppendIteration(trace, trace.ranks[r], slots, iteration, program.get());
    }
    job.programs.push_back(std::move(program));
  }
  return job;
}

JobPrograms LoadTraceReplayJob(const std::string& path, int world_size, int iterations,
                               TraceScaling scaling, int replica_ranks) {
  const CollectiveTrace trace =
      ScaleCollectiveTrace(ReadCollectiveTrace(path), world_size, scaling, replica_ranks);
  return MakeTraceReplayJob(trace, iterations);
}

}  // namespace nbox::work
