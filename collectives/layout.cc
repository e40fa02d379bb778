#include "collectives/layout.h"

#include <algorithm>
#include <stdexcept>

namespace nbox::coll {
namespace {

uint64_t ChunkCount(uint64_t block_elements, uint64_t chunk_elements) {
  if (block_elements == 0) return 0;
  if (chunk_elements == 0) return 1;
  return (block_elements + chunk_elements - 1) / chunk_elements;
}

}  // namespace

ElementRange SplitEvenly(uint64_t count, uint64_t parts, uint64_t index) {
  const uint64_t base = count / parts;
  const uint64_t longer = count % parts;
  return {index * base + std::min(index, longer), base + (index < longer ? 1 : 0)};
}

BlockLayout::BlockLayout(const CollectiveSpec& spec, BlockOrder order)
    : elements_(spec.bytes / spec.element_bytes),
      element_bytes_(spec.element_bytes),
      chunk_elements_(spec.chunk_bytes / spec.element_bytes),
      segments_(spec.world_size),
      channels_(spec.channels),
      order_(order) {}

ElementRange BlockLayout::Block(int segment, int channel) const {
  if (order_ == BlockOrder::kChannelMajor) {
    const ElementRange slice = SplitEvenly(elements_, channels_, channel);
    const ElementRange part = SplitEvenly(slice.count, segments_, segment);
    return {slice.begin + part.begin, part.count};
  }
  const ElementRange seg = SplitEvenly(elements_, segments_, segment);
  const ElementRange part = SplitEvenly(seg.count, channels_, channel);
  return {seg.begin + part.begin, part.count};
}

int BlockLayout::chunks(int segment, int channel) const {
  return chunks(Block(segment, channel));
}

ByteRange BlockLayout::chunk(int segment, int channel, int k) const {
  return chunk(Block(segment, channel), k);
}

int BlockLayout::chunks(const ElementRange& block) const {
  return static_cast<int>(ChunkCount(block.count, chunk_elements_));
}

ByteRange BlockLayout::chunk(const ElementRange& block, int k) const {
  const ElementRange part =
      SplitEvenly(block.count, ChunkCount(block.count, chunk_elements_), static_cast<uint64_t>(k));
  return {(block.begin + part.begin) * element_bytes_, part.count * element_bytes_};
}

BlockGrid::BlockGrid(const CollectiveSpec& spec, BlockOrder order)
    : layout_(spec, order), channels_(spec.channels) {
  first_region_.reserve(static_cast<size_t>(spec.world_size) * channels_ + 1);
  size_t next = 0;
  for (int segment = 0; segment < spec.world_size; ++segment) {
    for (int channel = 0; channel < channels_; ++channel) {
      first_region_.push_back(next);
      next += static_cast<size_t>(layout_.chunks(segment, channel));
    }
  }
  first_region_.push_back(next);
}

size_t BlockGrid::BlockIndex(int segment, int channel) const {
  return static_cast<size_t>(segment) * channels_ + channel;
}

Region BlockGrid::chunk(int segment, int channel, int k) const {
  const ByteRange range = layout_.chunk(segment, channel, k);
  return {first_region_[BlockIndex(segment, channel)] + k, range.offset, range.bytes};
}

void ForEachChunkChunkMajor(const BlockGrid& grid, int segment, int channels,
                            const std::function<void(int channel, const Region& chunk)>& visit) {
  int max_chunks = 0;
  for (int channel = 0; channel < channels; ++channel) {
    max_chunks = std::max(max_chunks, grid.chunks(segment, channel));
  }
  for (int k = 0; k < max_chunks; ++k) {
    for (int channel = 0; channel < channels; ++channel) {
      if (k < grid.chunks(segment, channel)) visit(channel, grid.chunk(segment, channel, k));
    }
  }
}

uint64_t ChunkCountBound(const CollectiveSpec& spec) {
  // Each non-empty block has at most ceil(block / chunk) <= block / chunk + 1 chunks, and at
  // most min(blocks, elements) blocks are non-empty.
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const uint64_t blocks = static_cast<uint64_t>(spec.world_size) * spec.channels;
  const uint64_t chunk_elements = spec.chunk_bytes / spec.element_bytes;
  const uint64_t non_empty = std::min(blocks, elements);
  return chunk_elements == 0 ? non_empty : elements / chunk_elements + non_empty;
}

uint64_t SendAndRecvPerChunkPerPhase(const CollectiveSpec& spec) {
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;
  return 2 * static_cast<uint64_t>((reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0)) *
         ChunkCountBound(spec);
}

void CheckStepBound(const CollectiveSpec& spec, uint64_t bound, const std::string& schedule) {
  if (bound <= kMaxStepsPerRank) return;
  const std::string what =
      spec.chunk_bytes != 0
          ? "CollectiveSpec.chunk_bytes: " + std::to_string(spec.chunk_bytes) +
                " is too small for " + std::to_string(spec.bytes) + " bytes"
          : "CollectiveSpec.world_size and channels: " + std::to_string(spec.world_size) + " x " +
                std::to_string(spec.channels) + " are too many";
  throw std::invalid_argument(what + ": the " + schedule + " schedule would have up to " +
                              std::to_string(bound) + " steps per rank (limit " +
                              std::to_string(kMaxStepsPerRank) + ")");
}

}  // namespace nbox::coll
