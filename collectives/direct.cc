#include "collectives/direct.h"

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {

uint64_t DirectStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  // Per phase a rank sends every chunk of the other segments once and receives every chunk of
  // its own once per peer (or the mirror image): two steps per chunk of the buffer.
  return SendAndRecvPerChunkPerPhase(spec);
}

RankSchedule BuildDirectRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  if (world == 1) return RankSchedule{rank, spec.bytes, {}};  // nothing to move
  CheckStepBound(spec, DirectStepBound(spec), "direct");
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;
  const BlockGrid grid(spec, spec.op == CollectiveOp::kAllReduce ? BlockOrder::kChannelMajor
                                                                 : BlockOrder::kSegmentMajor);
  RankScheduleBuilder steps(rank, spec.bytes, grid.region_count());
  // One phase: in round k, send segment `sent(to)` to rank + k and receive segment
  // `received(from)` from rank - k, chunk by chunk on every channel.
  auto phase = [&](auto sent, auto received, bool reduce) {
    for (int k = 1; k < world; ++k) {
      const int to = (rank + k) % world;
      const int from = (rank - k + world) % world;
      for (int channel = 0; channel < spec.channels; ++channel) {
        const int send_segment = sent(to);
        const int recv_segment = received(from);
        const int send_chunks = grid.chunks(send_segment, channel);
        const int recv_chunks = grid.chunks(recv_segment, channel);
        for (int c = 0; c < send_chunks || c < recv_chunks; ++c) {
          if (c < send_chunks) steps.AddSend(to, channel, grid.chunk(send_segment, channel, c));
          if (c < recv_chunks) {
            steps.AddRecv(from, channel, grid.chunk(recv_segment, channel, c), reduce);
          }
        }
      }
    }
  };
  if (reduce_scatter) {
    phase([](int to) { return to; }, [rank](int) { return rank; }, true);
  }
  if (all_gather) {
    phase([rank](int) { return rank; }, [](int from) { return from; }, false);
  }
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
