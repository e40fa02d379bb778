#include "tools/cosim/assembly/output_size.h"

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
  const auto ranks = static_cast<uint64_t>(a.workload.programs.world_size());
  const auto ports = 2 * static_cast<uint64_t>(a.net.topology.links.size());
  uint64_t bytes =
      kResultsFixedBytes + a.records.collective_instances * kResultsBytesPerCollective +
      ports * kResultsBytesPerPort +
      static_cast<uint64_t>(s.workload.iterations) * ranks * kResultsBytesPerIterationRank +
      ranks * kTrafficBytesPerRank;
  if (s.output.trace == scenario::Timeline::kChrome) bytes += a.records.ops * kTraceBytesPerOp;
  return bytes;
}

}  // namespace nbox::cosim
