#include "collectives/step_source.h"

#include <algorithm>

#include "collectives/all_to_all.h"
#include "collectives/layout.h"
#include "collectives/ring_step_source.h"

namespace nbox::coll {
namespace {

bool IsStreamedRing(const CollectiveSpec& spec) {
  return spec.algorithm == Algorithm::kRing &&
         (spec.op == CollectiveOp::kAllReduce || spec.op == CollectiveOp::kAllGather ||
          spec.op == CollectiveOp::kReduceScatter);
}

}  // namespace

std::unique_ptr<StepSource> BuildRankStepSource(const CollectiveSpec& spec, int rank) {
  if (!IsStreamedRing(spec) || rank < 0 || rank >= spec.world_size) {
    // BuildRankSchedule validates everything and names what is wrong.
    return std::make_unique<WholeScheduleSource>(BuildRankSchedule(spec, rank));
  }
  ValidateSpec(spec);
  return std::make_unique<RingStepSource>(spec, rank);
}

uint64_t HeldStepBound(const CollectiveSpec& spec, int rank) {
  const bool all_to_all = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV;
  if (all_to_all) return AllToAllStepCount(spec, rank);
  const uint64_t whole = ScheduleStepBound(spec);
  if (!IsStreamedRing(spec)) return whole;
  // A ring step sends and receives one block per channel; a block has at most
  // ceil(largest block / chunk) chunks.
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const uint64_t block = elements / (static_cast<uint64_t>(spec.world_size) * spec.channels) + 2;
  const uint64_t chunk = spec.chunk_bytes / spec.element_bytes;
  const uint64_t chunks = chunk == 0 ? 1 : (block + chunk - 1) / chunk;
  return std::min(whole, 3 * 2 * static_cast<uint64_t>(spec.channels) * chunks);
}

}  // namespace nbox::coll
