// Direct (one-shot) all-reduce, reduce-scatter and all-gather: every rank exchanges with every
// peer at once instead of passing data around a ring, so a chunk crosses one message hop per
// phase (two for all-reduce) instead of W - 1 per phase, at the price of W - 1 connections per
// rank. The bytes each rank sends are the ring's: (W - 1) / W of the buffer per phase.
//   Reduce-scatter: rank r sends segment d to rank d, for every d != r, and receives-and-adds
//     segment r from every peer; afterwards it holds the sum of its segment (RankSegment).
//   All-gather: rank r sends its own segment to every peer and receives segment s from rank s.
//   All-reduce: reduce-scatter, then all-gather of the reduced segments (a chunk of the rank's
//     segment goes out once every peer's addend for it is in).
// Peers are visited in NCCL's p2p order: round k sends to rank + k and receives from rank - k.
// Blocks and chunks as the ring cuts them (BlockGrid: channel-major for all-reduce,
// segment-major otherwise), so the two algorithms move the same regions.
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.algorithm == kDirect and op kAllReduce, kReduceScatter or
// kAllGather; `spec` must be valid and rank in range.
RankSchedule BuildDirectRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildDirectRankSchedule(spec, r) has for any rank r, without building it.
uint64_t DirectStepBound(const CollectiveSpec& spec);

}  // namespace nbox::coll
