#include "workloads/trace_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "workloads/program.h"

namespace nbox::work {
namespace {

constexpr std::pair<TraceScaling, std::string_view> kNames[] = {
    {TraceScaling::kNone, "none"},
    {TraceScaling::kFixedTotal, "fixed-total"},
    {TraceScaling::kFixedPerRank, "fixed-per-rank"},
};

// How a recorded communicator becomes communicators of the scaled job.
struct Plan {
  bool widened = false;     // spans every replica: one communicator over all D replicas
  std::vector<int> places;  // widened: its places in a replica (rank % R), ascending
  int replica = 0;          // local: the recorded replica it lies in
};

// A communicator inside one replica is copied into every scaled replica that copies its
// replica; one made of the same places in every replica, its ranks ascending (the world, a
// data-parallel group), is widened to every scaled replica. Anything else cannot be scaled.
Plan PlanFor(const CollectiveTrace& trace, const TraceCommunicator& comm, int replica_ranks) {
  const int recorded_replicas = trace.nranks / replica_ranks;
  std::set<int> replicas;
  std::set<int> places;
  for (int rank : comm.ranks) {
    replicas.insert(rank / replica_ranks);
    places.insert(rank % replica_ranks);
  }
  Plan plan;
  if (replicas.size() == 1) {
    plan.replica = *replicas.begin();
    return plan;
  }
  std::vector<int> product;
  for (int replica = 0; replica < recorded_replicas; ++replica) {
    for (int place : places) product.push_back(place + replica * replica_ranks);
  }
  std::sort(product.begin(), product.end());
  if (product != comm.ranks) {
    throw TraceError(fmt::format(
        "{}:{}: communicator {} (world ranks {}) spans model replicas but is not the same places "
        "of every replica in rank order: it cannot be scaled by replicas of {} ranks "
        "(workload.trace_replica)",
        trace.path, comm.first_line, comm.id, fmt::join(comm.ranks, " "), replica_ranks));
  }
  plan.widened = true;
  plan.places.assign(places.begin(), places.end());
  return plan;
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
                                     TraceScaling scaling, int replica_ranks) {
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
  if (replica_ranks < 1 || trace.nranks % replica_ranks != 0 || world_size % replica_ranks != 0) {
    throw TraceError(fmt::format(
        "{}: replicas of {} ranks (workload.trace_replica) must divide both the trace's {} "
        "ranks and the job's {} (job.world_size)",
        trace.path, replica_ranks, trace.nranks, world_size));
  }
  const int recorded_replicas = trace.nranks / replica_ranks;
  const int replicas = world_size / replica_ranks;

  CollectiveTrace scaled;
  scaled.path = trace.path;
  scaled.nranks = world_size;
  // scaled_comm[c][replica]: the scaled communicator scaled replica `replica` uses for
  // recorded communicator c (-1: none).
  std::vector<std::vector<int>> scaled_comm(trace.communicators.size(),
                                            std::vector<int>(static_cast<size_t>(replicas), -1));
  for (size_t c = 0; c < trace.communicators.size(); ++c) {
    const TraceCommunicator& comm = trace.communicators[c];
    const Plan plan = PlanFor(trace, comm, replica_ranks);
    if (plan.widened) {
      TraceCommunicator wide{comm.id, {}, comm.first_line};
      for (int replica = 0; replica < replicas; ++replica) {
        for (int place : plan.places) wide.ranks.push_back(place + replica * replica_ranks);
      }
      std::sort(wide.ranks.begin(), wide.ranks.end());
      std::fill(scaled_comm[c].begin(), scaled_comm[c].end(),
                static_cast<int>(scaled.communicators.size()));
      scaled.communicators.push_back(std::move(wide));
      continue;
    }
    for (int replica = 0; replica < replicas; ++replica) {
      if (replica % recorded_replicas != plan.replica) continue;
      TraceCommunicator copy{comm.id, {}, comm.first_line};
      for (int rank : comm.ranks) {
        copy.ranks.push_back(rank % replica_ranks + replica * replica_ranks);
      }
      scaled_comm[c][static_cast<size_t>(replica)] = static_cast<int>(scaled.communicators.size());
      scaled.communicators.push_back(std::move(copy));
    }
  }

  scaled.ranks.resize(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    const int replica = r / replica_ranks;
    const int recorded = r % replica_ranks + (replica % recorded_replicas) * replica_ranks;
    std::vector<TraceCollective>& collectives = scaled.ranks[static_cast<size_t>(r)];
    collectives = trace.ranks[static_cast<size_t>(recorded)];
    for (TraceCollective& c : collectives) {
      const size_t recorded_size = trace.communicators[static_cast<size_t>(c.comm)].ranks.size();
      c.comm = scaled_comm[static_cast<size_t>(c.comm)][static_cast<size_t>(replica)];
      const size_t size = scaled.communicators[static_cast<size_t>(c.comm)].ranks.size();
      if (coll::IsRooted(c.op) && static_cast<size_t>(c.root) >= size) {
        throw TraceError(fmt::format(
            "{}:{}: the {}'s root {} is not a rank of its communicator, of {} ranks in the "
            "{}-rank job",
            trace.path, c.line, coll::ToString(c.op), c.root, size, world_size));
      }
      if (coll::IsGathered(c.op) && scaling == TraceScaling::kFixedPerRank) {
        // Recorded as count x its ranks elements: one rank's part is bytes / ranks exactly.
        c.bytes = c.bytes / recorded_size * size;
        if (c.bytes > kMaxCollectiveBytes) {
          throw TraceError(fmt::format(
              "{}:{}: the {} grows to {} bytes on {} ranks, above the {} bytes (16 GiB) of one "
              "collective",
              trace.path, c.line, coll::ToString(c.op), c.bytes, size, kMaxCollectiveBytes));
        }
      }
    }
  }
  return scaled;
}

}  // namespace nbox::work
