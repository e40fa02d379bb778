#include "tools/cosim/output_size.h"

#include <map>
#include <vector>

namespace nbox::cosim {
namespace {

// Bytes per entry as nbox-cosim writes them, measured on its own files (GPT-3 13B on 64 ranks
// and 175B on 512: 426 and 435 bytes per collective entry of results.json, 214 and 218 per
// port), rounded up.
constexpr uint64_t kResultsBytesPerCollective = 500;
constexpr uint64_t kResultsBytesPerPort = 250;
constexpr uint64_t kResultsBytesPerIterationRank = 300;
constexpr uint64_t kResultsFixedBytes = 1 << 20;    // settings, the workload, the summary
constexpr uint64_t kTraceBytesPerOp = 200;          // a Chrome event per op of a rank
constexpr uint64_t kTrafficBytesPerRank = 64 * 48;  // up to 64 lanes of 48 bytes a rank

}  // namespace

uint64_t EstimateOutputBytes(const scenario::Scenario& s, const JobAssembly& a) {
  const work::JobPrograms& job = a.workload.programs;
  // Per distinct program: its ops, and its collective ops by communicator slot.
  struct Counts {
    uint64_t ops = 0;
    std::map<int, uint64_t> collectives_by_slot;
  };
  std::map<const work::RankProgram*, Counts> counts;
  for (const auto& program : job.programs) {
    if (!program || counts.count(program.get()) > 0) continue;
    Counts& c = counts[program.get()];
    c.ops = program->ops.size();
    for (const work::Op& op : program->ops) {
      if (op.kind == work::OpKind::kCollective || op.kind == work::OpKind::kTransfers) {
        ++c.collectives_by_slot[op.comm];
      }
    }
  }
  // A collective instance is reported once: count it at its communicator's first member.
  uint64_t instances = 0;
  uint64_t ops = 0;
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;
    const Counts& c = counts.at(program.get());
    ops += c.ops;
    for (const auto& [slot, n] : c.collectives_by_slot) {
      const int index = job.rank_comms[static_cast<size_t>(rank)][static_cast<size_t>(slot)];
      if (job.communicators[static_cast<size_t>(index)].ranks.front() == rank) instances += n;
    }
  }
  const auto ranks = static_cast<uint64_t>(job.world_size());
  const auto ports = 2 * static_cast<uint64_t>(a.net.topology.links.size());
  uint64_t bytes =
      kResultsFixedBytes + instances * kResultsBytesPerCollective + ports * kResultsBytesPerPort +
      static_cast<uint64_t>(s.workload.iterations) * ranks * kResultsBytesPerIterationRank +
      ranks * kTrafficBytesPerRank;
  if (s.output.trace == "chrome") bytes += ops * kTraceBytesPerOp;
  return bytes;
}

}  // namespace nbox::cosim
