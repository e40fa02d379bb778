// The ring algorithms (NCCL's Ring with channels and chunking).
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.algorithm == kRing; `spec` must be valid and rank in range.
RankSchedule BuildRingRankSchedule(const CollectiveSpec& spec, int rank);

}  // namespace nbox::coll
