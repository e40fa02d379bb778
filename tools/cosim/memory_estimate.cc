#include "tools/cosim/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "collectives/layout.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job.h"

namespace nbox::cosim {
namespace {

// Steps a rank's schedule of `spec` has at most: a Send and a Recv per chunk per phase (the
// ring all-reduce has two phases, the hierarchical one four over fewer chunks, the others one).
uint64_t StepBound(const coll::CollectiveSpec& spec) {
  const uint64_t phases = spec.op == coll::CollectiveOp::kAllReduce ? 2 : 1;
  return 2 * phases * coll::ChunkCountBound(spec);
}

}  // namespace

MemoryEstimate EstimateScheduleMemory(const JobAssembly& assembly) {
  MemoryEstimate estimate;
  const work::JobPrograms& job = assembly.workload.programs;
  const auto& communicators = assembly.job->GetCommunicators();
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;  // a real rank: its schedules live in its own process
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    uint64_t largest = 0;
    for (const auto& op : program->ops) {
      if (op.kind != work::OpKind::kCollective) continue;
      const auto& comm = *communicators[static_cast<size_t>(slots[static_cast<size_t>(op.comm)])];
      if (!comm.BuildsCollectiveSchedules()) continue;
      largest = std::max(largest, StepBound(comm.MakeSpec(op.collective, op.bytes, op.counts)));
    }
    estimate.schedule_steps += largest;
  }
  estimate.bytes =
      static_cast<uint64_t>(static_cast<double>(estimate.schedule_steps) * kBytesPerScheduleStep);
  return estimate;
}

uint64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    uint64_t kib = 0;
    if (words >> name >> kib && name == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::string MemoryRefusal(const MemoryEstimate& estimate, uint64_t available,
                          const scenario::Scenario& s) {
  if (available == 0 || estimate.bytes <= available) return "";
  return fmt::format(
      "the run needs about {:.1f} GiB for its collective schedules ({} steps over the emulated "
      "ranks, {} bytes each, held at once) and the machine has {:.1f} GiB available; nothing was "
      "simulated. Shrink it with network.model = analytical (collectives timed whole, no "
      "schedules), fewer ranks (job.world_size = {}), fewer steps per rank "
      "(collectives.channels = {}, a larger collectives.chunk or 0), or hierarchical "
      "collectives on servers (collectives.allreduce)",
      static_cast<double>(estimate.bytes) / (1ull << 30), estimate.schedule_steps,
      kBytesPerScheduleStep, static_cast<double>(available) / (1ull << 30), s.job.world_size,
      s.collectives.channels);
}

}  // namespace nbox::cosim
