// Helpers shared by the collectives tests. They restate the conventions of schedule.h from
// first principles (they never call the code under test), so a test can compare against them.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll::testing {

// Size of part `index` when `count` items are cut into `parts` near-equal parts, the longer
// parts first (schedule.h's convention for segments, channel slices and chunks).
inline uint64_t PartSize(uint64_t count, uint64_t parts, uint64_t index) {
  return count / parts + (index < count % parts ? 1 : 0);
}

// First item of part `index` under the same convention.
inline uint64_t PartBegin(uint64_t count, uint64_t parts, uint64_t index) {
  uint64_t begin = 0;
  for (uint64_t i = 0; i < index; ++i) begin += PartSize(count, parts, i);
  return begin;
}

// Which rank's segment element `element` lies in (AllGather / ReduceScatter ownership).
inline int SegmentOwner(uint64_t elements, int world_size, uint64_t element) {
  for (int r = 0; r < world_size; ++r) {
    const uint64_t begin = PartBegin(elements, world_size, r);
    if (element >= begin && element < begin + PartSize(elements, world_size, r)) return r;
  }
  return -1;
}

inline CollectiveSpec Spec(CollectiveOp op, int world_size, uint64_t bytes, int channels,
                           uint64_t chunk_bytes, uint32_t element_bytes = 4) {
  CollectiveSpec spec;
  spec.op = op;
  spec.world_size = world_size;
  spec.bytes = bytes;
  spec.channels = channels;
  spec.chunk_bytes = chunk_bytes;
  spec.element_bytes = element_bytes;
  return spec;
}

// A broadcast or reduce from `root`.
inline CollectiveSpec RootedSpec(CollectiveOp op, Algorithm algorithm, int world_size,
                                 uint64_t bytes, int root, int channels, uint64_t chunk_bytes) {
  CollectiveSpec spec = Spec(op, world_size, bytes, channels, chunk_bytes);
  spec.algorithm = algorithm;
  spec.root = root;
  return spec;
}

inline const std::vector<CollectiveOp>& AllOps() {
  static const std::vector<CollectiveOp> ops = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                                                CollectiveOp::kReduceScatter};
  return ops;
}

}  // namespace nbox::coll::testing
