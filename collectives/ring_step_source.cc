#include "collectives/ring_step_source.h"

#include <algorithm>

namespace nbox::coll {

RingStepSource::RingStepSource(const CollectiveSpec& spec, int rank)
    : spec_(spec),
      rank_(rank),
      // All-reduce has no per-rank data placement to honour, so each channel gets a contiguous
      // slice; all-gather and reduce-scatter keep rank r's data contiguous at RankSegment(r).
      layout_(spec, spec.op == CollectiveOp::kAllReduce ? BlockOrder::kChannelMajor
                                                        : BlockOrder::kSegmentMajor),
      phase_steps_(spec.world_size - 1),
      reduce_scatter_(spec.op != CollectiveOp::kAllGather),
      all_gather_(spec.op != CollectiveOp::kReduceScatter),
      ring_steps_(phase_steps_ * ((reduce_scatter_ ? 1 : 0) + (all_gather_ ? 1 : 0))) {
  CheckStepBound(spec, spec.world_size == 1 ? 0 : SendAndRecvPerChunkPerPhase(spec), "ring");
  for (int channel = 0; channel < spec.channels; ++channel) {
    orders_.emplace_back(spec, channel);
    positions_.push_back(orders_.back().PositionOf(rank));
  }
}

RingStepSource::Move RingStepSource::MoveAt(int g, int channel) const {
  // Reduce-scatter step s: send seg(1 + s), receive seg(2 + s); all-gather step s: send
  // seg(s), receive seg(s + 1); seg(j) is the segment of the rank j places back (ring.cc).
  const bool rs = InReduceScatter(g);
  const int s = rs || !reduce_scatter_ ? g : g - phase_steps_;
  const int send_back = rs ? 1 + s : s;
  const int recv_back = rs ? 2 + s : s + 1;
  const RingOrder& ring = orders_[static_cast<size_t>(channel)];
  const int position = positions_[static_cast<size_t>(channel)];
  Move move;
  move.send_segment = ring.RankAt(position - send_back);
  move.recv_segment = ring.RankAt(position - recv_back);
  move.send_block = layout_.Block(move.send_segment, channel);
  move.recv_block = layout_.Block(move.recv_segment, channel);
  move.send_chunks = layout_.chunks(move.send_block);
  move.recv_chunks = layout_.chunks(move.recv_block);
  return move;
}

const RingStepSource::KeptMove& RingStepSource::KeptAt(int g, int channel) const {
  return kept_[static_cast<size_t>(g - first_kept_) * static_cast<size_t>(spec_.channels) +
               static_cast<size_t>(channel)];
}

// Within a channel the steps go chunk by chunk: send k (if any), then receive k (if any).
uint32_t RingStepSource::SendId(int g, int channel, int k) const {
  const KeptMove& kept = KeptAt(g, channel);
  return kept.begin + static_cast<uint32_t>(k + std::min(k, kept.move.recv_chunks));
}

uint32_t RingStepSource::RecvId(int g, int channel, int k) const {
  const KeptMove& kept = KeptAt(g, channel);
  return kept.begin + static_cast<uint32_t>(std::min(k + 1, kept.move.send_chunks) + k);
}

bool RingStepSource::NextBatch(std::vector<Step>& steps) {
  const size_t before = steps.size();
  while (steps.size() == before && next_ < ring_steps_) {
    const int g = next_++;
    const bool rs = InReduceScatter(g);
    // The all-gather's receives overwrite what the reduce-scatter sent phase_steps_ earlier.
    const bool after_read = reduce_scatter_ && !rs;
    for (int channel = 0; channel < spec_.channels; ++channel) {
      const Move move = MoveAt(g, channel);
      kept_.push_back_slot() = {move, next_id_};
      const RingOrder& ring = orders_[static_cast<size_t>(channel)];
      const int position = positions_[static_cast<size_t>(channel)];
      for (int k = 0; k < std::max(move.send_chunks, move.recv_chunks); ++k) {
        if (k < move.send_chunks) {
          Step& send = steps.emplace_back();
          send.id = next_id_++;
          send.kind = StepKind::kSend;
          send.peer = ring.RankAt(position + 1);
          send.channel = channel;
          const ByteRange region = layout_.chunk(move.send_block, k);
          send.offset = region.offset;
          send.bytes = region.bytes;
          // What it sends arrived at the previous ring step (none at the first).
          if (g > 0 && Kept(g - 1)) send.deps.push_back(RecvId(g - 1, channel, k));
        }
        if (k < move.recv_chunks) {
          Step& recv = steps.emplace_back();
          recv.id = next_id_++;
          recv.kind = StepKind::kRecv;
          recv.peer = ring.RankAt(position - 1);
          recv.channel = channel;
          const ByteRange region = layout_.chunk(move.recv_block, k);
          recv.offset = region.offset;
          recv.bytes = region.bytes;
          recv.reduce = rs;
          if (after_read && Kept(g - phase_steps_)) {
            recv.deps.push_back(SendId(g - phase_steps_, channel, k));
          }
        }
      }
    }
  }
  return steps.size() > before;
}

void RingStepSource::Retire(uint32_t first_live) {
  const auto channels = static_cast<size_t>(spec_.channels);
  while (!kept_.empty()) {
    const uint32_t end = kept_.size() > channels ? kept_[channels].begin : next_id_;
    if (end > first_live) break;
    for (size_t c = 0; c < channels; ++c) kept_.pop_front();
    ++first_kept_;
  }
}

}  // namespace nbox::coll
