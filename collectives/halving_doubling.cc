#include "collectives/halving_doubling.h"

#include <utility>
#include <vector>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {

HalvingDoublingRanks::HalvingDoublingRanks(int world_size) : virtual_ranks_(1), rounds_(0) {
  while (virtual_ranks_ * 2 <= world_size) {
    virtual_ranks_ *= 2;
    ++rounds_;
  }
  folded_ = world_size - virtual_ranks_;
}

int HalvingDoublingRanks::VirtualOf(int rank) const {
  if (rank >= 2 * folded_) return rank - folded_;
  return rank % 2 == 1 ? rank / 2 : -1;
}

namespace {

// Segment ranges [first, last), in the order a message sequence visits them.
using SegmentRanges = std::vector<std::pair<int, int>>;

// Every chunk of `ranges` on `channel`, range by range, each in buffer order of the grid.
std::vector<Region> ChunksOf(const BlockGrid& grid, const SegmentRanges& ranges, int channel) {
  std::vector<Region> chunks;
  for (const auto& [first, last] : ranges) {
    for (int segment = first; segment < last; ++segment) {
      for (int c = 0; c < grid.chunks(segment, channel); ++c) {
        chunks.push_back(grid.chunk(segment, channel, c));
      }
    }
  }
  return chunks;
}

class HalvingDoublingSchedule {
 public:
  HalvingDoublingSchedule(const CollectiveSpec& spec, int rank)
      : spec_(spec),
        rank_(rank),
        ranks_(spec.world_size),
        grid_(spec, spec.op == CollectiveOp::kAllReduce ? BlockOrder::kChannelMajor
                                                        : BlockOrder::kSegmentMajor),
        steps_(rank, spec.bytes, grid_.region_count()) {}

  RankSchedule Build() && {
    const bool reduce_scatter = spec_.op != CollectiveOp::kAllGather;
    const bool all_gather = spec_.op != CollectiveOp::kReduceScatter;
    const int v = ranks_.VirtualOf(rank_);
    const int folded = v < 0 ? rank_ : ranks_.FoldedInto(rank_);
    const int host = v < 0 ? rank_ + 1 : rank_;  // the rank that runs the folded rank's rounds
    const int host_v = ranks_.VirtualOf(host);
    const int all = ranks_.virtual_ranks();
    if (folded >= 0) {
      // A folded rank hands its host its whole buffer to be added, in the order the host gives
      // it away, or (all-gather) its segment.
      const SegmentRanges handed =
          reduce_scatter ? ForwardingOrder(0, all, host_v) : SegmentRanges{{folded, folded + 1}};
      Exchange(v < 0 ? host : -1, handed, v < 0 ? -1 : folded, handed, reduce_scatter);
    }
    if (v >= 0 && reduce_scatter) Halve(v);
    if (v >= 0 && all_gather) Double(v);
    if (folded >= 0) {
      // The host's answer, in the order its doubling completed it: the whole buffer
      // (all-reduce), every segment but the folded rank's (all-gather), or (reduce-scatter)
      // the folded rank's segment.
      SegmentRanges answer =
          all_gather ? AcquisitionOrder(host_v, all) : SegmentRanges{{folded, folded + 1}};
      if (!reduce_scatter) answer.front() = {folded + 1, folded + 2};  // the host's own group
      const int peer = v < 0 ? host : folded;
      const bool sends = v >= 0;
      Exchange(sends ? peer : -1, answer, sends ? -1 : peer, answer, false);
    }
    return std::move(steps_).Finish();
  }

 private:
  // Recursive halving: the range of virtual ranks whose segments this rank still reduces
  // halves every round, from distance P/2 down to 1.
  void Halve(int v) {
    int low = 0;
    for (int mask = ranks_.virtual_ranks() / 2; mask >= 1; mask /= 2) {
      const bool keeps_lower = (v & mask) == 0;
      const int kept = keeps_lower ? low : low + mask;
      const int given = keeps_lower ? low + mask : low;
      // Both halves go in the order their keeper forwards them (ForwardingOrder).
      Exchange(ranks_.RankOf(v ^ mask), ForwardingOrder(given, mask, v ^ mask),
               ForwardingOrder(kept, mask, v), true);
      low = kept;
    }
  }

  // Recursive doubling: the aligned range this rank holds doubles every round, from
  // distance 1 up to P/2.
  void Double(int v) {
    for (int mask = 1; mask < ranks_.virtual_ranks(); mask *= 2) {
      Exchange(ranks_.RankOf(v ^ mask), AcquisitionOrder(v, mask), AcquisitionOrder(v ^ mask, mask),
               false);
    }
  }

  // The segments of virtual ranks [first, first + count).
  SegmentRanges Segments(int first, int count) const {
    return {{ranks_.FirstSegment(first), ranks_.FirstSegment(first + count)}};
  }

  // The segments of virtual ranks [first, first + count) (aligned), which virtual rank
  // `keeper` (in that range) reduces next, in the order its later rounds of recursive halving
  // give them away: the half without it first, itself in the order that half's keeper gives
  // it away, then the half with it, recursively; its own last. Sent in that order, what a rank
  // forwards next arrives first, and in the order it is forwarded.
  void AppendForwardingOrder(int first, int count, int keeper, SegmentRanges& order) const {
    if (count == 1) {
      order.push_back(Segments(first, 1).front());
      return;
    }
    const int half = count / 2;
    const bool keeps_lower = keeper < first + half;
    AppendForwardingOrder(keeps_lower ? first + half : first, half, keeper ^ half, order);
    AppendForwardingOrder(keeps_lower ? first : first + half, half, keeper, order);
  }
  SegmentRanges ForwardingOrder(int first, int count, int keeper) const {
    SegmentRanges order;
    AppendForwardingOrder(first, count, keeper, order);
    return order;
  }

  // The `count` virtual ranks' segments virtual rank `holder` holds before the doubling round
  // of distance `count`, in the order it got them: its own, then what each earlier round
  // brought, each in the order its sender held it. Sent in that order, what is ready goes
  // first, and a rank forwards a block in the order it arrived.
  void AppendAcquisitionOrder(int holder, int count, SegmentRanges& order) const {
    order.push_back(Segments(holder, 1).front());
    for (int mask = 1; mask < count; mask *= 2) AppendAcquisitionOrder(holder ^ mask, mask, order);
  }
  SegmentRanges AcquisitionOrder(int holder, int count) const {
    SegmentRanges order;
    AppendAcquisitionOrder(holder, count, order);
    return order;
  }

  // Exchange with one peer: sends `sent` to it and receives `received` from it.
  void Exchange(int peer, const SegmentRanges& sent, const SegmentRanges& received, bool reduce) {
    Exchange(peer, sent, peer, received, reduce);
  }

  // Sends every chunk of `sent_ranges` to `to` and receives every chunk of `received_ranges`
  // from `from` (-1: no send, or no receive), channel by channel, a send and a receive at a
  // time.
  void Exchange(int to, const SegmentRanges& sent_ranges, int from,
                const SegmentRanges& received_ranges, bool reduce) {
    for (int channel = 0; channel < spec_.channels; ++channel) {
      const std::vector<Region> sent =
          to < 0 ? std::vector<Region>{} : ChunksOf(grid_, sent_ranges, channel);
      const std::vector<Region> received =
          from < 0 ? std::vector<Region>{} : ChunksOf(grid_, received_ranges, channel);
      for (size_t i = 0; i < sent.size() || i < received.size(); ++i) {
        if (i < sent.size()) steps_.AddSend(to, channel, sent[i]);
        if (i < received.size()) steps_.AddRecv(from, channel, received[i], reduce);
      }
    }
  }

  const CollectiveSpec& spec_;
  int rank_;
  HalvingDoublingRanks ranks_;
  BlockGrid grid_;
  RankScheduleBuilder steps_;
};

}  // namespace

uint64_t HalvingDoublingStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  const uint64_t phases = (spec.op == CollectiveOp::kAllReduce ? 2 : 1);
  // Per phase a chunk is sent and received at most once; the fold adds one step before and
  // one after.
  return (2 * phases + 2) * ChunkCountBound(spec);
}

RankSchedule BuildHalvingDoublingRankSchedule(const CollectiveSpec& spec, int rank) {
  if (spec.world_size == 1) return RankSchedule{rank, spec.bytes, {}};  // nothing to move
  CheckStepBound(spec, HalvingDoublingStepBound(spec), "halving-doubling");
  return HalvingDoublingSchedule(spec, rank).Build();
}

}  // namespace nbox::coll
