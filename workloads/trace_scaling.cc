#include "workloads/trace_scaling.h"

#include <fmt/format.h>

#include <stdexcept>

#include "workloads/program.h"

namespace nbox::work {
namespace {

constexpr std::pair<TraceScaling, std::string_view> kNames[] = {
    {TraceScaling::kNone, "none"},
    {TraceScaling::kFixedTotal, "fixed-total"},
    {TraceScaling::kFixedPerRank, "fixed-per-rank"},
};

bool IsGathered(coll::CollectiveOp op) {
  return op == coll::CollectiveOp::kAllGather || op == coll::CollectiveOp::kReduceScatter;
}

}  // namespace

std::string_view ToString(TraceScaling scaling) {
  for (const auto& [value, name] : kNames) {
    if (value == scaling) return name;
  }
  return "?";
}

TraceScaling TraceScalingFromString(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  throw std::invalid_argument(fmt::format("unknown trace scaling '{}'", name));
}

CollectiveTrace ScaleCollectiveTrace(const CollectiveTrace& trace, int world_size,
                                     TraceScaling scaling) {
  if (trace.nranks == world_size) return trace;
  if (scaling == TraceScaling::kNone) {
    throw TraceError(
        fmt::format("{}: the trace has {} ranks but the job has {} (job.world_size; "
                    "workload.trace_scaling scales a trace to another number of ranks)",
                    trace.path, trace.nranks, world_size));
  }
  if (world_size < 1) {
    throw TraceError(fmt::format("{}: cannot scale to {} ranks", trace.path, world_size));
  }
  const int recorded = trace.nranks;
  CollectiveTrace scaled;
  scaled.path = trace.path;
  scaled.comm = trace.comm;
  scaled.nranks = world_size;
  scaled.ranks.resize(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    std::vector<TraceCollective>& collectives = scaled.ranks[static_cast<size_t>(r)];
    collectives = trace.ranks[static_cast<size_t>(r % recorded)];
    for (TraceCollective& c : collectives) {
      if (coll::IsRooted(c.op) && c.root >= world_size) {
        throw TraceError(fmt::format("{}:{}: the {}'s root {} is not a rank of the {}-rank job",
                                     trace.path, c.line, coll::ToString(c.op), c.root, world_size));
      }
      if (IsGathered(c.op) && scaling == TraceScaling::kFixedPerRank) {
        // Recorded as count x nranks elements: one rank's part is bytes / nranks exactly.
        c.bytes = c.bytes / static_cast<uint64_t>(recorded) * static_cast<uint64_t>(world_size);
        if (c.bytes > kMaxCollectiveBytes) {
          throw TraceError(fmt::format(
              "{}:{}: the {} grows to {} bytes on {} ranks, above the {} bytes (16 GiB) of one "
              "collective",
              trace.path, c.line, coll::ToString(c.op), c.bytes, world_size, kMaxCollectiveBytes));
        }
      }
    }
  }
  return scaled;
}

}  // namespace nbox::work
