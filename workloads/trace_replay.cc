#include "workloads/trace_replay.h"

#include <fmt/format.h>

#include <stdexcept>

#include "workloads/ops.h"

namespace nbox::work {
namespace {

void AppendCompute(uint64_t ns, size_t index, int iteration, RankProgram* program) {
  if (ns == 0) return;
  program->ops.push_back(ComputeOp(iteration, fmt::format("compute before trace #{}", index),
                                   static_cast<double>(ns) * 1e-9));
}

void AppendIteration(const std::vector<TraceCollective>& collectives, int iteration,
                     RankProgram* program) {
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
    Op collective = CollectiveOp(iteration, fmt::format("trace #{} {}", i, coll::ToString(c.op)),
                                 c.op, c.bytes);
    collective.root = c.root;
    program->ops.push_back(std::move(collective));
  }
  program->ops.push_back(WaitAllOp(iteration));
  program->ops.push_back(MarkerOp(OpKind::kIterationEnd, iteration));
}

}  // namespace

std::vector<RankProgram> MakeTraceReplayPrograms(const CollectiveTrace& trace, int iterations) {
  if (iterations < 1) {
    throw std::invalid_argument(
        fmt::format("a trace replay needs at least one iteration (got {})", iterations));
  }
  std::vector<RankProgram> programs(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    programs[r].iterations = iterations;
    for (int iteration = 0; iteration < iterations; ++iteration) {
      AppendIteration(trace.ranks[r], iteration, &programs[r]);
    }
  }
  return programs;
}

std::vector<RankProgram> LoadTraceReplayPrograms(const std::string& path, int world_size,
                                                 int iterations, TraceScaling scaling) {
  const CollectiveTrace trace =
      ScaleCollectiveTrace(ReadCollectiveTrace(path), world_size, scaling);
  return MakeTraceReplayPrograms(trace, iterations);
}

}  // namespace nbox::work
