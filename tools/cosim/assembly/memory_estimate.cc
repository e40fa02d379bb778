#include "tools/cosim/assembly/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "collectives/schedule.h"
#include "collectives/send_lanes.h"
#include "collectives/step_source.h"
#include "tools/cosim/scenario/key_schema.h"

namespace nbox::cosim {
namespace {

// collectives.channels as the scenario spells it (its key's own formatting: 0 is auto).
std::string ChannelsText(const scenario::Scenario& s) {
  return scenario::SettingText(s, "collectives.channels");
}

constexpr double kMiB = 1 << 20;
constexpr double kGiB = 1 << 30;

}  // namespace

MemoryEstimate EstimateNetworkMemory(const scenario::Scenario& s, const topo::Topology& topology) {
  const NetworkModel& model = NetworkModelOf(s);
  MemoryEstimate estimate;
  estimate.links = topology.links.size();
  estimate.route_entries = model.route_entries(s, topology);
  const NetworkMemoryCost cost = model.memory_cost(s);
  estimate.network_bytes = static_cast<uint64_t>(
      cost.base_bytes + cost.bytes_per_link * static_cast<double>(estimate.links) +
      cost.bytes_per_route * static_cast<double>(estimate.route_entries));
  return estimate;
}

void AddScheduleMemory(const work::JobPrograms& job,
                       const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators,
                       MemoryEstimate& estimate) {
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;  // a real rank: its schedules live in its own process
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    uint64_t largest = 0;
    for (const auto& op : program->ops) {
      if (op.kind != work::OpKind::kCollective) continue;
      const int index = slots[static_cast<size_t>(op.comm)];
      const auto& comm = *communicators[static_cast<size_t>(index)];
      if (!comm.BuildsCollectiveSchedules()) continue;
      const coll::CollectiveSpec spec =
          comm.MakeSpec(op.collective, op.bytes, op.counts, op.root, op.element_bytes);
      // Only an all-to-all's count depends on the rank (a linear search of its members).
      const bool all_to_all = op.collective == coll::CollectiveOp::kAllToAll ||
                              op.collective == coll::CollectiveOp::kAllToAllV;
      const int me =
          all_to_all ? work::RankIn(job.communicators[static_cast<size_t>(index)], rank) : 0;
      largest = std::max(largest, coll::HeldStepBound(spec, me));
    }
    estimate.schedule_steps += largest;
  }
  estimate.schedule_bytes =
      static_cast<uint64_t>(static_cast<double>(estimate.schedule_steps) * kBytesPerScheduleStep);
  estimate.schedules_counted = true;
}

std::string DescribeMemoryEstimate(const MemoryEstimate& e) {
  auto mib = [](uint64_t bytes) { return static_cast<double>(bytes) / kMiB; };
  return fmt::format(
      "{:.0f} MiB: network {:.0f}, schedules {:.0f}, connections {:.0f} ({} of {} carrying), "
      "programs {:.0f}, records {:.0f}, report {:.0f} of {} collective instances",
      mib(e.total_bytes()), mib(e.network_bytes), mib(e.schedule_bytes), mib(e.connection_bytes),
      e.carrying_connections, e.connections, mib(e.program_bytes), mib(e.record_bytes),
      mib(e.report_bytes), e.collective_instances);
}

void AddRunMemory(const RunRecordCounts& counts, int ranks, MemoryEstimate& estimate) {
  estimate.program_bytes = counts.program_bytes + static_cast<uint64_t>(ranks * kBytesPerRank);
  estimate.record_bytes = counts.record_bytes() + counts.issued_bytes;
  estimate.collective_instances = counts.collective_instances;
  estimate.report_bytes = static_cast<uint64_t>(static_cast<double>(counts.collective_instances) *
                                                kReportBytesPerCollective);
}

void AddConnectionMemory(const scenario::Scenario& s, const work::JobPrograms& job,
                         const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators,
                         MemoryEstimate& estimate) {
  // Per communicator and algorithm (the ring's lanes serve its all-reduce, all-gather and
  // reduce-scatter of every size alike), each member's most lanes over its collectives: the
  // connections opened (a tree's leaf opens one a channel, its inner ranks three). Of those,
  // the ones that carry bytes: the same, but for a direct all-to-all each member's own count
  // (an all-to-all-v's empty pairs stay idle; DLRM's embedding exchange sends only from the
  // ranks holding tables).
  using Key = std::pair<int, coll::Algorithm>;
  struct MemberLanes {
    uint64_t opened = 0;
    uint64_t carrying = 0;
  };
  std::map<Key, std::map<int, MemberLanes>> lanes_of;
  std::set<std::tuple<int, int, int>> pairs;  // transfers: (communicator, rank in it, peer)
  // Ranks of a stage share their program: what it communicates is gathered once.
  std::map<const work::RankProgram*, work::ProgramCommunication> communication_of;
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;
    auto found = communication_of.find(program.get());
    if (found == communication_of.end()) {
      found = communication_of.emplace(program.get(), work::DistinctCommunication(*program)).first;
    }
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    std::map<int, int> me_in;  // communicator -> this rank's place in it
    auto me = [&](int index) {
      auto [it, added] = me_in.emplace(index, 0);
      if (added) it->second = work::RankIn(job.communicators[static_cast<size_t>(index)], rank);
      return it->second;
    };
    for (const auto& [slot, peer] : found->second.sends) {
      const int index = slots[static_cast<size_t>(slot)];
      pairs.insert({index, me(index), peer});
    }
    for (const work::Op* collective : found->second.collectives) {
      const work::Op& op = *collective;
      const int index = slots[static_cast<size_t>(op.comm)];
      const auto& comm = *communicators[static_cast<size_t>(index)];
      const coll::CollectiveSpec spec =
          comm.MakeSpec(op.collective, op.bytes, op.counts, op.root, op.element_bytes);
      MemberLanes& lanes = lanes_of[Key{index, spec.algorithm}][me(index)];
      lanes.opened = std::max(lanes.opened, coll::SendLaneBound(spec, me(index)));
      lanes.carrying = std::max(lanes.carrying, coll::CarryingLaneBound(spec, me(index)));
    }
  }
  for (const auto& [key, members] : lanes_of) {
    for (const auto& [member, lanes] : members) {
      estimate.connections += lanes.opened;
      estimate.carrying_connections += std::min(lanes.carrying, lanes.opened);
    }
  }
  estimate.connections += pairs.size();  // a transfer's pair carries what it was opened for
  estimate.carrying_connections += pairs.size();
  const ConnectionMemoryCost cost = NetworkModelOf(s).connection_cost(s);
  estimate.connection_bytes = static_cast<uint64_t>(
      static_cast<double>(estimate.carrying_connections) * cost.carrying_bytes +
      static_cast<double>(estimate.connections - estimate.carrying_connections) * cost.idle_bytes);
}

std::string KeepLessOfTheRun(const scenario::Scenario& s) {
  return fmt::format(
      "Keep less: fewer iterations (workload.iterations = {}), fewer micro-batches or layers "
      "(workload.global_batch, workload.layers), fewer ranks (job.world_size = {}), or no "
      "timeline (output.trace = none)",
      s.workload.iterations, s.job.world_size);
}

void RefuseUnlessItFits(const MemoryEstimate& e, uint64_t available, const scenario::Scenario& s) {
  if (available == 0 || e.total_bytes() <= available) return;
  const std::string schedules =
      e.schedules_counted
          ? fmt::format(
                "; {:.1f} GiB for its collective schedules: {} steps over the emulated "
                "ranks, {} bytes each, held at once (while it runs: the report comes after, "
                "the larger of the two counted)",
                static_cast<double>(e.schedule_bytes) / kGiB, e.schedule_steps,
                kBytesPerScheduleStep)
          : ", before its collective schedules are counted";
  const std::string connections =
      e.connections > 0 ? fmt::format("; {:.1f} GiB for up to {} connections",
                                      static_cast<double>(e.connection_bytes) / kGiB, e.connections)
                        : "";
  const uint64_t kept = e.program_bytes + e.record_bytes + e.report_bytes;
  const std::string run =
      kept > 0 ? fmt::format(
                     "; {:.1f} GiB for the programs, the records the run keeps and its "
                     "report of {} collective instances{}",
                     static_cast<double>(kept) / kGiB, e.collective_instances,
                     e.run_forecast ? ", forecast from smaller builds of the same job before "
                                      "building its programs"
                                    : "")
               : "";
  const std::string what = fmt::format(
      "the run needs about {:.1f} GiB ({:.1f} GiB for the {} network model's build: {} links, "
      "{} route entries{}{}{}) and the machine has {:.1f} GiB available; nothing was simulated.",
      static_cast<double>(e.total_bytes()) / kGiB, static_cast<double>(e.network_bytes) / kGiB,
      s.network.model, e.links, e.route_entries, schedules, connections, run,
      static_cast<double>(available) / kGiB);
  const uint64_t largest = std::max({e.network_bytes, e.schedule_bytes, e.connection_bytes, kept});
  if (kept == largest) {
    throw ResourceRefusal(what + " " + KeepLessOfTheRun(s));
  }
  if (e.connection_bytes == largest) {
    throw ResourceRefusal(fmt::format(
        "{} Open fewer connections: algorithms whose peers per rank do not grow with the world "
        "(collectives.allreduce, allgather, reducescatter = ring or tree rather than direct; "
        "collectives.alltoall = hierarchical on servers), fewer ranks (job.world_size = {}), "
        "fewer channels (collectives.channels = {}), or network.model = flow or analytical "
        "(lighter connections than TCP's sockets)",
        what, s.job.world_size, ChannelsText(s)));
  }
  if (e.network_bytes == largest) {
    throw ResourceRefusal(fmt::format(
        "{} Shrink the network: network.model = flow or analytical (compact links and routes), "
        "or a smaller topology (topology.k, topology.leaves, servers.count or the topology file)",
        what));
  }
  throw ResourceRefusal(fmt::format(
      "{} Shrink the schedules: network.model = analytical (collectives timed whole, no "
      "schedules), fewer ranks (job.world_size = {}), fewer steps per rank "
      "(collectives.channels = {}, a larger collectives.chunk or 0), or an all-reduce whose "
      "steps held per rank do not grow with the world (collectives.allreduce = ring or tree, "
      "or auto as NCCL picks; hierarchical on servers)",
      what, s.job.world_size, ChannelsText(s)));
}

}  // namespace nbox::cosim
