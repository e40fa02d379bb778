#include "workloads/trace_replay.h"

#include <fmt/format.h>

#include <stdexcept>

namespace nbox::work {
namespace {

Op Marker(OpKind kind, int iteration) {
  Op op;
  op.kind = kind;
  op.iteration = iteration;
  return op;
}

void AppendCompute(uint64_t ns, int line, int iteration, RankProgram* program) {
  if (ns == 0) return;
  Op op;
  op.kind = OpKind::kCompute;
  op.iteration = iteration;
  op.label = fmt::format("gap before trace line {}", line);
  op.duration_s = static_cast<double>(ns) * 1e-9;
  program->ops.push_back(op);
}

void AppendIteration(const std::vector<TraceCollective>& collectives, int iteration,
                     RankProgram* program) {
  program->ops.push_back(Marker(OpKind::kIterationBegin, iteration));
  for (size_t i = 0; i < collectives.size(); ++i) {
    const TraceCollective& c = collectives[i];
    if (i > 0) {
      const TraceCollective& previous = collectives[i - 1];
      if (c.start_ns >= previous.end_ns) {
        program->ops.push_back(Marker(OpKind::kWaitCollectives, iteration));
        AppendCompute(c.start_ns - previous.end_ns, c.line, iteration, program);
      } else {
        AppendCompute(c.start_ns - previous.start_ns, c.line, iteration, program);
      }
    }
    Op op;
    op.kind = OpKind::kCollective;
    op.iteration = iteration;
    op.label = fmt::format("trace line {}", c.line);
    op.collective = c.op;
    op.bytes = c.bytes;
    program->ops.push_back(op);
  }
  program->ops.push_back(Marker(OpKind::kWaitCollectives, iteration));
  program->ops.push_back(Marker(OpKind::kIterationEnd, iteration));
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

}  // namespace nbox::work
