// The chains follow the ring 0 -> 1 -> ... -> W-1 -> 0 of each channel: a broadcast starts at
// the root and ends at the rank before it (root - 1), which only receives; a reduce starts at
// the rank after the root (root + 1), which only sends, and ends at the root, which only
// receives (NCCL's runRing for ncclFuncReduce: the rank whose predecessor is the root sends,
// the root receives and reduces, the others receive, reduce and send).
//
// The buffer is one segment: channel c moves a contiguous 1/channels slice of it, cut into
// chunks of at most chunk_bytes (the BlockGrid of a one-rank spec, so slices and chunks follow
// the layout rule of every other collective). For each chunk a rank that receives does so from
// rank-1 (overwriting for a broadcast, accumulating for a reduce) and, unless it ends the
// chain, sends the chunk to rank+1; RankScheduleBuilder makes the send wait for the arrival,
// so chunks pipeline down the chain. Steps are numbered chunk-major (chunk k of every channel
// before chunk k+1), Recv before Send.
#include "collectives/chain.h"

#include <stdexcept>
#include <string>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {

int ChainFirst(const CollectiveSpec& spec) {
  return spec.op == CollectiveOp::kReduce ? (spec.root + 1) % spec.world_size : spec.root;
}

uint64_t ChainStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  return 2 * ChunkCountBound(one_segment);  // a Recv and a Send per chunk
}

RankSchedule BuildChainRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  if (world == 1) return RankSchedule{rank, spec.bytes, {}};

  CheckStepBound(spec, ChainStepBound(spec),
                 spec.op == CollectiveOp::kReduce ? "reduce" : "broadcast");
  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  const BlockGrid grid(one_segment, BlockOrder::kChannelMajor);

  const int next = (rank + 1) % world;
  const int prev = (rank + world - 1) % world;
  const bool reduce = spec.op == CollectiveOp::kReduce;
  const int first = ChainFirst(spec);
  const bool receives = rank != first;
  const bool sends = next != first;
  RankScheduleBuilder steps(rank, spec.bytes, grid.region_count());
  ForEachChunkChunkMajor(grid, 0, spec.channels, [&](int channel, const Region& chunk) {
    if (receives) steps.AddRecv(prev, channel, chunk, reduce);
    if (sends) steps.AddSend(next, channel, chunk);
  });
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
