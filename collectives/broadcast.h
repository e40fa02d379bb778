// Ring broadcast: a pipelined chain root -> root+1 -> ... -> root-1 (NCCL's ring broadcast).
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.op == kBroadcast on the ring; `spec` must be valid and rank in
// range.
RankSchedule BuildRingBroadcastRankSchedule(const CollectiveSpec& spec, int rank);

}  // namespace nbox::coll
