#include "collectives/send_lanes.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include "collectives/all_to_all.h"
#include "collectives/ring_order.h"
#include "collectives/tree.h"

namespace nbox::coll {
namespace {

// A ring op whose every (segment, channel) block holds at least one element: both block
// orders split the elements evenly, so the smallest block has floor(floor(E / a) / b)
// elements, at least 1 exactly when E >= channels x world_size.
bool EveryRingBlockFilled(const CollectiveSpec& spec) {
  const bool ring_op = spec.op == CollectiveOp::kAllReduce || spec.op == CollectiveOp::kAllGather ||
                       spec.op == CollectiveOp::kReduceScatter;
  const uint64_t elements = spec.bytes / spec.element_bytes;
  return spec.algorithm == Algorithm::kRing && ring_op && spec.world_size > 1 &&
         elements >= static_cast<uint64_t>(spec.channels) * spec.world_size;
}

}  // namespace

std::vector<SendLane> SendLanes(const CollectiveSpec& spec, int rank) {
  ValidateSpec(spec);
  std::vector<SendLane> lanes;
  if (EveryRingBlockFilled(spec)) {
    // Step 0 sends a non-empty block on every channel, in channel order (ring.cc).
    for (int channel = 0; channel < spec.channels; ++channel) {
      lanes.push_back({RingOrder(spec, channel).Next(rank), channel});
    }
    return lanes;
  }
  std::set<std::pair<int, int>> seen;
  for (const Step& step : BuildRankSchedule(spec, rank).steps) {
    if (step.kind == StepKind::kSend && seen.insert({step.peer, step.channel}).second) {
      lanes.push_back({step.peer, step.channel});
    }
  }
  return lanes;
}

const std::vector<std::vector<SendLane>>& SendLanesCache::EveryRank(const CollectiveSpec& spec) {
  if (spec.counts) {
    throw std::invalid_argument("SendLanesCache: an all-to-all-v's lanes depend on its counts");
  }
  const Key key{spec.op,          spec.algorithm,     spec.world_size,
                spec.bytes,       spec.element_bytes, spec.channels,
                spec.chunk_bytes, spec.root,          spec.ranks_per_server};
  auto it = lanes_.find(key);
  if (it == lanes_.end()) {
    std::vector<std::vector<SendLane>> lanes;
    for (int rank = 0; rank < spec.world_size; ++rank) lanes.push_back(SendLanes(spec, rank));
    it = lanes_.emplace(key, std::move(lanes)).first;
  }
  return it->second;
}

uint64_t SendLaneBound(const CollectiveSpec& spec) {
  const auto world = static_cast<uint64_t>(spec.world_size);
  const auto channels = static_cast<uint64_t>(spec.channels);
  const bool all_to_all = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV;
  uint64_t per_channel = world - 1;
  switch (spec.algorithm) {
    case Algorithm::kRing:
      per_channel = 1;
      break;
    case Algorithm::kHierarchical:
      if (all_to_all) {
        const auto gpus = static_cast<uint64_t>(spec.ranks_per_server);
        per_channel = (gpus - 1) + (world / gpus - 1);
      } else {
        per_channel = 2;
      }
      break;
    case Algorithm::kTree:
      per_channel = 2 * 4;
      break;
    case Algorithm::kHalvingDoubling: {
      uint64_t rounds = 0;
      while ((uint64_t{2} << rounds) <= world) ++rounds;
      // A world that is not a power of two folds its extra ranks in first and answers them last.
      const bool power_of_two = (world & (world - 1)) == 0;
      per_channel = power_of_two ? rounds : rounds + 2;
      break;
    }
    case Algorithm::kDirect:
      break;
  }
  return std::min(per_channel, world - 1) * channels;
}

uint64_t SendLaneBound(const CollectiveSpec& spec, int rank) {
  if (spec.algorithm != Algorithm::kTree || spec.world_size < 2) return SendLaneBound(spec);
  // The peers BuildTreeRankSchedule sends to: up to the parent (all but a broadcast), down to
  // the children (all but a reduce), on each channel's tree.
  const bool up = spec.op != CollectiveOp::kBroadcast;
  const bool down = spec.op != CollectiveOp::kReduce;
  const bool rooted = spec.op != CollectiveOp::kAllReduce;
  uint64_t lanes = 0;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const TreeLinks links =
        rooted ? RootedTreeLinks(spec.world_size, channel % 2, spec.root, rank)
               : AllReduceTreeLinks(spec.world_size, spec.ranks_per_server, channel, rank);
    if (up && links.parent >= 0) ++lanes;
    if (down)
      lanes += std::count_if(links.children.begin(), links.children.end(),
                             [](int child) { return child >= 0; });
  }
  return lanes;
}

uint64_t CarryingLaneBound(const CollectiveSpec& spec, int rank) {
  const bool all_to_all = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV;
  if (!all_to_all || spec.algorithm != Algorithm::kDirect) return SendLaneBound(spec, rank);
  const auto channels = static_cast<uint64_t>(spec.channels);
  uint64_t lanes = 0;
  for (int peer = 0; peer < spec.world_size; ++peer) {
    if (peer == rank) continue;
    lanes += std::min(channels, AllToAllBytes(spec, rank, peer) / spec.element_bytes);
  }
  return lanes;
}

}  // namespace nbox::coll
