// How a collective's buffer is cut: into segments (one per rank), channel slices, and chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/region.h"
#include "collectives/schedule.h"

namespace nbox::coll {

// Elements [begin, begin + count).
struct ElementRange {
  uint64_t begin = 0;
  uint64_t count = 0;
};

// Part `index` of `count` elements cut into `parts` contiguous parts in order, the first
// count % parts of them one element longer than the others.
ElementRange SplitEvenly(uint64_t count, uint64_t parts, uint64_t index);

// Which cut comes first.
enum class BlockOrder {
  kChannelMajor,  // channel c owns a contiguous slice, cut into world_size segments
  kSegmentMajor,  // segment s is contiguous (RankSegment), cut into channel slices
};

// The buffer cut into blocks (segment, channel), each cut into the fewest chunks of at most
// chunk_bytes (whole elements, near-equal sizes). Empty blocks have no chunks. O(1) memory and
// time per query: what a schedule streamed step by step uses (ring_step_source.h).
class BlockLayout {
 public:
  BlockLayout(const CollectiveSpec& spec, BlockOrder order);

  ElementRange Block(int segment, int channel) const;
  int chunks(int segment, int channel) const;
  // Chunk k of the block, in bytes of the buffer.
  ByteRange chunk(int segment, int channel, int k) const;
  // The same of a block Block() gave, for a caller that asks several things of one block
  // (Block divides four times).
  int chunks(const ElementRange& block) const;
  ByteRange chunk(const ElementRange& block, int k) const;

 private:
  uint64_t elements_;
  uint64_t element_bytes_;
  uint64_t chunk_elements_;  // 0 = a block is one chunk
  int segments_;
  int channels_;
  BlockOrder order_;
};

// The blocks and chunks of a BlockLayout as regions, numbered densely for the builders'
// per-region bookkeeping (rank_schedule_builder.h). Chunk k of a block is the same region
// whichever ring step touches it, which is what lets chunk k of a step depend on chunk k of the
// previous step only. Holds an index per block (O(segments x channels)).
class BlockGrid {
 public:
  BlockGrid(const CollectiveSpec& spec, BlockOrder order);

  int chunks(int segment, int channel) const { return layout_.chunks(segment, channel); }
  Region chunk(int segment, int channel, int k) const;
  size_t region_count() const { return first_region_.back(); }

 private:
  size_t BlockIndex(int segment, int channel) const;

  BlockLayout layout_;
  int channels_;
  std::vector<size_t> first_region_;  // per block, and one past the last block
};

// Calls visit(channel, chunk) for every chunk of `segment`, chunk-major: chunk k of every
// channel before chunk k + 1 (the order pipelined chains and trees number their steps in).
void ForEachChunkChunkMajor(const BlockGrid& grid, int segment, int channels,
                            const std::function<void(int channel, const Region& chunk)>& visit);

// An upper bound on the chunks a BlockGrid of `spec` has, computed without building it.
uint64_t ChunkCountBound(const CollectiveSpec& spec);

// The step bound of a schedule that sends and receives every chunk of the buffer at most once
// per phase (a reduce-scatter phase, an all-gather phase, or both for an all-reduce).
uint64_t SendAndRecvPerChunkPerPhase(const CollectiveSpec& spec);

// Throws std::invalid_argument, naming the field of `spec` to blame, when `bound` (a
// schedule's steps per rank at most, its algorithm's ...StepBound(spec)) exceeds
// kMaxStepsPerRank. `schedule` names the schedule in the message ("ring", "hierarchical").
void CheckStepBound(const CollectiveSpec& spec, uint64_t bound, const std::string& schedule);

}  // namespace nbox::coll
