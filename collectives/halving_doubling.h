// Recursive halving and doubling (Rabenseifner's all-reduce; Thakur, Rabenseifner and Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005):
//   Reduce-scatter, recursive halving: P = 2^k ranks; in round j = 0..k-1 a rank exchanges
//     with the rank at distance P / 2^(j+1): it keeps the half of its current range of
//     segments that holds its own, sends the other half and adds the partner's copy of the
//     half it keeps. After k rounds it holds the sum of its own segment.
//   All-gather, recursive doubling: in round j a rank exchanges with the rank at distance 2^j
//     everything it holds (2^j segments), so it holds 2^(j+1) after the round.
//   All-reduce: reduce-scatter, then all-gather of the reduced segments.
// A message hop per round: 2 log2 P latencies per all-reduce instead of the ring's 2(W - 1),
// and the ring's bytes, (P - 1) / P of the buffer per phase.
//
// Non-power-of-two W (the paper's handling): with P the largest power of two <= W and
// r = W - P, the first r even ranks 2i fold into the odd rank 2i + 1 before the rounds (for
// all-reduce and reduce-scatter they send their whole buffer, which 2i + 1 adds; for
// all-gather their segment), the P remaining ranks run the rounds as virtual ranks whose
// "segment" is their own and their folded partner's (contiguous, segments 2i and 2i + 1),
// and afterwards 2i + 1 hands 2i its result (all-reduce: the whole buffer; reduce-scatter:
// segment 2i; all-gather: every segment but 2i). That costs a message hop and a buffer's
// worth of bytes before and after the rounds.
//
// Blocks and chunks as the ring cuts them (BlockGrid: channel-major for all-reduce,
// segment-major otherwise); every channel runs the rounds on its own slice, and a round sends
// every chunk of every block of its half, so a chunk a later round forwards leaves as soon as
// it is reduced (the dependencies are the data hazards only, as in every schedule here).
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.algorithm == kHalvingDoubling and op kAllReduce,
// kReduceScatter or kAllGather; `spec` must be valid and rank in range.
RankSchedule BuildHalvingDoublingRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildHalvingDoublingRankSchedule(spec, r) has for any rank r, without
// building it.
uint64_t HalvingDoublingStepBound(const CollectiveSpec& spec);

// How W ranks map to the P = 2^k ranks that run the rounds (the folding above); shared by
// the schedule and its closed form (traffic.cc).
class HalvingDoublingRanks {
 public:
  explicit HalvingDoublingRanks(int world_size);

  int virtual_ranks() const { return virtual_ranks_; }  // P
  int rounds() const { return rounds_; }                // log2 P
  // The rank that runs the rounds as virtual rank v.
  int RankOf(int v) const { return v < folded_ ? 2 * v + 1 : v + folded_; }
  // The virtual rank `rank` runs, or -1 for a rank folded into rank + 1.
  int VirtualOf(int rank) const;
  // The rank folded into `rank`, or -1.
  int FoldedInto(int rank) const { return rank < 2 * folded_ && rank % 2 == 1 ? rank - 1 : -1; }
  // Virtual rank v's segments are [FirstSegment(v), FirstSegment(v + 1)).
  int FirstSegment(int v) const { return v < folded_ ? 2 * v : v + folded_; }

 private:
  int virtual_ranks_;
  int rounds_;
  int folded_;  // r = W - P
};

}  // namespace nbox::coll
