// The ring algorithms (NCCL's Ring with channels and chunking).
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.algorithm == kRing; `spec` must be valid and rank in range.
RankSchedule BuildRingRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildRingRankSchedule(spec, r) has for any rank r, without building it.
uint64_t RingStepBound(const CollectiveSpec& spec);

}  // namespace nbox::coll
