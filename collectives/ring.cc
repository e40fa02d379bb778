// Ring collectives, one ring per channel, visiting the ranks in RingOrder (ring_order.h):
// 0 -> 1 -> ... -> W-1 -> 0 without servers.
//
// Segments are named relative to the rank's ring position p: seg(j) is segment
// RankAt(p - j), i.e. the segment that RankSegment gives the rank j places before this one.
// In ring step s a rank sends one segment to the next rank and receives the one the previous
// rank sends.
//   Reduce-scatter, s = 0..W-2: send seg(1+s), receive-and-add seg(2+s). The segment of the
//     rank at position x starts at position x+1 and gathers one addend per hop, so after
//     W-1 steps every rank holds the full sum of seg(W) = its own segment, as RankSegment
//     promises.
//   All-gather, s = 0..W-2: send seg(s), receive seg(s+1). Every rank starts with its own.
//   All-reduce: reduce-scatter, then all-gather of the reduced segments.
// Within a step every (segment, channel) block is cut into chunks; chunk k of a block is sent
// once its chunk k has arrived, so chunks pipeline around the ring. In an all-reduce, chunk k
// received in all-gather step s overwrites what reduce-scatter step s sent, after it has left.
// RingStepSource (ring_step_source.h) generates the steps a ring step at a time.
#include "collectives/ring.h"

#include "collectives/layout.h"
#include "collectives/ring_step_source.h"

namespace nbox::coll {

uint64_t RingStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  // Each phase sends and receives every chunk at most once per rank.
  return SendAndRecvPerChunkPerPhase(spec);
}

RankSchedule BuildRingRankSchedule(const CollectiveSpec& spec, int rank) {
  RankSchedule schedule{rank, spec.bytes, {}};
  RingStepSource source(spec, rank);
  while (source.NextBatch(schedule.steps)) {
  }
  return schedule;
}

}  // namespace nbox::coll
