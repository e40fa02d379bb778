// Ring broadcast along the ring 0 -> 1 -> ... -> W-1 -> 0 of each channel, starting at the
// root and ending at the rank before it (root - 1), which only receives.
//
// The buffer is one segment: channel c moves a contiguous 1/channels slice of it, cut into
// chunks of at most chunk_bytes (the BlockGrid of a one-rank spec, so slices and chunks follow
// the layout rule of every other collective). For each chunk a rank other than the root
// receives it from rank-1 (overwrite) and, unless it is the last rank of the chain, forwards
// it to rank+1; RankScheduleBuilder makes the forward wait for the arrival, so chunks
// pipeline down the chain. Steps are numbered chunk-major (chunk k of every channel before
// chunk k+1), Recv before Send.
#include "collectives/broadcast.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {

RankSchedule BuildRingBroadcastRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  if (world == 1) return RankSchedule{rank, spec.bytes, {}};

  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  const uint64_t bound = 2 * ChunkCountBound(one_segment);
  if (bound > kMaxStepsPerRank) {
    throw std::invalid_argument(
        "CollectiveSpec.chunk_bytes: " + std::to_string(spec.chunk_bytes) + " is too small for " +
        std::to_string(spec.bytes) + " bytes: the broadcast schedule would have up to " +
        std::to_string(bound) + " steps per rank (limit " + std::to_string(kMaxStepsPerRank) + ")");
  }
  const BlockGrid grid(one_segment, BlockOrder::kChannelMajor);

  const int next = (rank + 1) % world;
  const int prev = (rank + world - 1) % world;
  const bool receives = rank != spec.root;
  const bool forwards = next != spec.root;
  RankScheduleBuilder steps(rank, spec.bytes, grid.region_count());
  ForEachChunkChunkMajor(grid, 0, spec.channels, [&](int channel, const Region& chunk) {
    if (receives) steps.AddRecv(prev, channel, chunk, false);
    if (forwards) steps.AddSend(next, channel, chunk);
  });
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
