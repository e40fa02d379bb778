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
// once its chunk k has arrived (RankScheduleBuilder derives that), so chunks pipeline around
// the ring.
#include "collectives/ring.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"
#include "collectives/ring_order.h"

namespace nbox::coll {
namespace {

class RingBuilder {
 public:
  RingBuilder(const CollectiveSpec& spec, int rank, BlockOrder order)
      : spec_(spec),
        rank_(rank),
        grid_(spec, order),
        steps_(rank, spec.bytes, grid_.region_count()) {
    for (int channel = 0; channel < spec.channels; ++channel) {
      orders_.emplace_back(spec, channel);
    }
  }

  // One ring step on every channel: send seg(send_back), receive seg(recv_back) (file comment).
  void AddStep(int send_back, int recv_back, bool reduce) {
    for (int channel = 0; channel < spec_.channels; ++channel) {
      const RingOrder& ring = orders_[channel];
      const int position = ring.PositionOf(rank_);
      const int next = ring.RankAt(position + 1);
      const int prev = ring.RankAt(position - 1);
      const int send_segment = ring.RankAt(position - send_back);
      const int recv_segment = ring.RankAt(position - recv_back);
      const int send_chunks = grid_.chunks(send_segment, channel);
      const int recv_chunks = grid_.chunks(recv_segment, channel);
      for (int k = 0; k < std::max(send_chunks, recv_chunks); ++k) {
        if (k < send_chunks) steps_.AddSend(next, channel, grid_.chunk(send_segment, channel, k));
        if (k < recv_chunks) {
          steps_.AddRecv(prev, channel, grid_.chunk(recv_segment, channel, k), reduce);
        }
      }
    }
  }

  RankSchedule Finish() && { return std::move(steps_).Finish(); }

 private:
  const CollectiveSpec& spec_;
  int rank_;
  BlockGrid grid_;
  RankScheduleBuilder steps_;
  std::vector<RingOrder> orders_;  // per channel
};

}  // namespace

uint64_t RingStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  // Each phase sends and receives every chunk at most once per rank.
  return SendAndRecvPerChunkPerPhase(spec);
}

RankSchedule BuildRingRankSchedule(const CollectiveSpec& spec, int rank) {
  if (spec.world_size == 1) return RankSchedule{rank, spec.bytes, {}};  // nothing to move
  CheckStepBound(spec, RingStepBound(spec), "ring");
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;

  // All-reduce has no per-rank data placement to honour, so each channel gets a contiguous
  // slice; all-gather and reduce-scatter keep rank r's data contiguous at RankSegment(r).
  const BlockOrder order =
      spec.op == CollectiveOp::kAllReduce ? BlockOrder::kChannelMajor : BlockOrder::kSegmentMajor;
  RingBuilder ring(spec, rank, order);
  const int steps = spec.world_size - 1;
  if (reduce_scatter) {
    for (int s = 0; s < steps; ++s) ring.AddStep(1 + s, 2 + s, true);
  }
  if (all_gather) {
    for (int s = 0; s < steps; ++s) ring.AddStep(s, s + 1, false);
  }
  return std::move(ring).Finish();
}

}  // namespace nbox::coll
