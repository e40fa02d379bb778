// The ring's pipelined chains: NCCL's ring broadcast and ring reduce.
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.op == kBroadcast or kReduce on the ring; `spec` must be valid
// and rank in range. Broadcast: the chain root -> root+1 -> ... -> root-1, each rank passing
// on what it received. Reduce: the chain root+1 -> root+2 -> ... -> root, each rank adding
// what it received to its own buffer and passing the sum on, so the root ends with the sum.
RankSchedule BuildChainRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildChainRankSchedule(spec, r) has for any rank r, without building it.
uint64_t ChainStepBound(const CollectiveSpec& spec);

// The chain's first rank: the root (broadcast) or the one after it (reduce). Every rank but
// the one before it sends.
int ChainFirst(const CollectiveSpec& spec);

}  // namespace nbox::coll
