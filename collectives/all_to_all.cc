#include "collectives/all_to_all.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {
namespace {

// One block (what a rank sends to, or receives from, one peer) at byte `offset` of the
// buffer, cut into channel slices and chunks: the regions by channel, in chunk order, numbered
// from `next_index` on (which ends one past the last).
std::vector<std::vector<Region>> CutBlock(const CollectiveSpec& spec, uint64_t block_bytes,
                                          uint64_t offset, size_t& next_index) {
  const uint64_t element = spec.element_bytes;
  const uint64_t chunk_elements = spec.chunk_bytes / element;
  std::vector<std::vector<Region>> by_channel(static_cast<size_t>(spec.channels));
  for (int channel = 0; channel < spec.channels; ++channel) {
    const ElementRange slice = SplitEvenly(block_bytes / element, spec.channels, channel);
    if (slice.count == 0) continue;
    const uint64_t chunks =
        chunk_elements == 0 ? 1 : (slice.count + chunk_elements - 1) / chunk_elements;
    for (uint64_t k = 0; k < chunks; ++k) {
      const ElementRange piece = SplitEvenly(slice.count, chunks, k);
      by_channel[static_cast<size_t>(channel)].push_back(Region{
          next_index++, offset + (slice.begin + piece.begin) * element, piece.count * element});
    }
  }
  return by_channel;
}

uint64_t ChunksOf(const CollectiveSpec& spec, uint64_t block_bytes) {
  const uint64_t element = spec.element_bytes;
  const uint64_t chunk_elements = spec.chunk_bytes / element;
  uint64_t chunks = 0;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const ElementRange slice = SplitEvenly(block_bytes / element, spec.channels, channel);
    if (slice.count == 0) continue;
    chunks += chunk_elements == 0 ? 1 : (slice.count + chunk_elements - 1) / chunk_elements;
  }
  return chunks;
}

// The rank a block from src to dst goes through in the hierarchical algorithm, or -1 when it
// goes directly (inside a server, or on its rail).
int HierarchicalRelay(const CollectiveSpec& spec, int src, int dst) {
  const int gpus = spec.ranks_per_server;
  if (src / gpus == dst / gpus || src % gpus == dst % gpus) return -1;
  return (src / gpus) * gpus + dst % gpus;
}

// Where src's block for dst starts in src's send buffer.
uint64_t SendBlockOffset(const CollectiveSpec& spec, int src, int dst) {
  uint64_t offset = 0;
  for (int d = 0; d < dst; ++d) offset += AllToAllBytes(spec, src, d);
  return offset;
}

// Calls visit(src, dst) for every block rank `rank` relays in the hierarchical all-to-all:
// from a GPU of its own server to one of its local index elsewhere (the only pairs
// HierarchicalRelay can give it), O(world_size) of them.
template <typename Visit>
void ForEachRelayedBlock(const CollectiveSpec& spec, int rank, Visit visit) {
  const int gpus = spec.ranks_per_server;
  const int server = rank / gpus;
  for (int src = server * gpus; src < (server + 1) * gpus; ++src) {
    for (int dst = rank % gpus; dst < spec.world_size; dst += gpus) {
      if (HierarchicalRelay(spec, src, dst) == rank) visit(src, dst);
    }
  }
}

void CheckAllToAllSteps(const CollectiveSpec& spec, int rank, const std::string& schedule) {
  const uint64_t steps = AllToAllStepCount(spec, rank);
  if (steps <= kMaxStepsPerRank) return;
  throw std::invalid_argument("CollectiveSpec.chunk_bytes: " + std::to_string(spec.chunk_bytes) +
                              " is too small: the " + schedule + " schedule of rank " +
                              std::to_string(rank) + " would have " + std::to_string(steps) +
                              " steps (limit " + std::to_string(kMaxStepsPerRank) + ")");
}

}  // namespace

uint64_t AllToAllStepCount(const CollectiveSpec& spec, int rank) {
  uint64_t steps = 0;
  for (int peer = 0; peer < spec.world_size; ++peer) {
    if (peer == rank) continue;
    steps += ChunksOf(spec, AllToAllBytes(spec, rank, peer)) +
             ChunksOf(spec, AllToAllBytes(spec, peer, rank));
  }
  if (spec.algorithm == Algorithm::kHierarchical) {
    ForEachRelayedBlock(spec, rank, [&](int src, int dst) {
      steps += 2 * ChunksOf(spec, AllToAllBytes(spec, src, dst));
    });
  }
  return steps;
}

uint64_t AllToAllBytes(const CollectiveSpec& spec, int src, int dst) {
  if (spec.op == CollectiveOp::kAllToAllV) {
    return (*spec.counts)[static_cast<size_t>(src) * spec.world_size + dst];
  }
  if (spec.op != CollectiveOp::kAllToAll) {
    throw std::invalid_argument("AllToAllBytes: op " + std::string(ToString(spec.op)) +
                                " is not an all-to-all");
  }
  return SplitEvenly(spec.bytes / spec.element_bytes, spec.world_size, dst).count *
         spec.element_bytes;
}

uint64_t AllToAllBytesSent(const CollectiveSpec& spec, int rank) {
  uint64_t total = 0;
  for (int peer = 0; peer < spec.world_size; ++peer) {
    if (peer != rank) total += AllToAllBytes(spec, rank, peer);
  }
  return total;
}

RankSchedule BuildDirectAllToAllRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  uint64_t send_total = 0;
  uint64_t recv_total = 0;
  for (int peer = 0; peer < world; ++peer) {
    send_total += AllToAllBytes(spec, rank, peer);
    recv_total += AllToAllBytes(spec, peer, rank);
  }
  CheckAllToAllSteps(spec, rank, "all-to-all");

  // Regions: the send blocks in destination order, then the receive blocks in source order.
  size_t next_index = 0;
  std::vector<std::vector<std::vector<Region>>> send(static_cast<size_t>(world));
  std::vector<std::vector<std::vector<Region>>> recv(static_cast<size_t>(world));
  uint64_t offset = 0;
  for (int peer = 0; peer < world; ++peer) {
    const uint64_t bytes = AllToAllBytes(spec, rank, peer);
    if (peer != rank) send[static_cast<size_t>(peer)] = CutBlock(spec, bytes, offset, next_index);
    offset += bytes;
  }
  for (int peer = 0; peer < world; ++peer) {
    const uint64_t bytes = AllToAllBytes(spec, peer, rank);
    if (peer != rank) recv[static_cast<size_t>(peer)] = CutBlock(spec, bytes, offset, next_index);
    offset += bytes;
  }

  RankScheduleBuilder steps(rank, send_total + recv_total, next_index);
  for (int k = 1; k < world; ++k) {
    const int to = (rank + k) % world;
    const int from = (rank + world - k) % world;
    for (int channel = 0; channel < spec.channels; ++channel) {
      for (const Region& region : send[static_cast<size_t>(to)][static_cast<size_t>(channel)]) {
        steps.AddSend(to, channel, region);
      }
      for (const Region& region : recv[static_cast<size_t>(from)][static_cast<size_t>(channel)]) {
        steps.AddRecv(from, channel, region, false);
      }
    }
  }
  return std::move(steps).Finish();
}

RankSchedule BuildHierarchicalAllToAllRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  auto relay = [&](int src, int dst) { return HierarchicalRelay(spec, src, dst); };

  CheckAllToAllSteps(spec, rank, "hierarchical all-to-all");
  // Regions: send blocks by destination, receive blocks by source, then relayed pieces in
  // block order. Offsets as the direct algorithm's for the first two.
  size_t next_index = 0;
  uint64_t offset = 0;
  std::vector<std::vector<std::vector<Region>>> send(static_cast<size_t>(world));
  std::vector<std::vector<std::vector<Region>>> recv(static_cast<size_t>(world));
  for (int peer = 0; peer < world; ++peer) {
    const uint64_t bytes = AllToAllBytes(spec, rank, peer);
    if (peer != rank) send[static_cast<size_t>(peer)] = CutBlock(spec, bytes, offset, next_index);
    offset += bytes;
  }
  for (int peer = 0; peer < world; ++peer) {
    const uint64_t bytes = AllToAllBytes(spec, peer, rank);
    if (peer != rank) recv[static_cast<size_t>(peer)] = CutBlock(spec, bytes, offset, next_index);
    offset += bytes;
  }
  std::map<std::pair<int, int>, std::vector<std::vector<Region>>> relayed;  // (src, dst)
  ForEachRelayedBlock(spec, rank, [&](int src, int dst) {
    const uint64_t bytes = AllToAllBytes(spec, src, dst);
    relayed[{src, dst}] = CutBlock(spec, bytes, offset, next_index);
    offset += bytes;
  });

  RankScheduleBuilder steps(rank, offset, next_index);
  for (int src = 0; src < world; ++src) {
    for (int dst = 0; dst < world; ++dst) {
      if (src == dst || (src != rank && dst != rank && relay(src, dst) != rank)) continue;
      const int via = relay(src, dst);
      for (int channel = 0; channel < spec.channels; ++channel) {
        const auto c = static_cast<size_t>(channel);
        if (src == rank) {
          for (const Region& r : send[static_cast<size_t>(dst)][c]) {
            steps.AddSend(via < 0 ? dst : via, channel, r);
          }
        } else if (dst == rank) {
          for (const Region& r : recv[static_cast<size_t>(src)][c]) {
            steps.AddRecv(via < 0 ? src : via, channel, r, false);
          }
        } else {
          for (const Region& r : relayed.at({src, dst})[c]) {
            steps.AddRecv(src, channel, r, false);
            steps.AddSend(dst, channel, r);
          }
        }
      }
    }
  }
  return std::move(steps).Finish();
}

uint64_t AllToAllSenderOffset(const CollectiveSpec& spec, int rank, uint64_t offset) {
  const int world = spec.world_size;
  uint64_t position = SendBlockOffset(spec, rank, world);  // past the rank's send buffer
  auto outside = [&] {
    return std::invalid_argument("AllToAllSenderOffset: byte " + std::to_string(offset) +
                                 " of rank " + std::to_string(rank) +
                                 "'s buffer holds nothing a peer sent");
  };
  if (offset < position) throw outside();
  // The layout of BuildDirectAllToAllRankSchedule and BuildHierarchicalAllToAllRankSchedule:
  // receive blocks by source, then (hierarchical) relayed pieces by (src, dst).
  for (int src = 0; src < world; ++src) {
    const uint64_t bytes = AllToAllBytes(spec, src, rank);
    if (offset < position + bytes) {
      if (src == rank) throw outside();  // the own block is a local copy
      return SendBlockOffset(spec, src, rank) + (offset - position);
    }
    position += bytes;
  }
  if (spec.algorithm == Algorithm::kHierarchical) {
    // The pairs this rank relays, in the builder's (src, dst) order, O(world) of them: a real
    // rank asks this for every message from an emulated peer.
    std::optional<uint64_t> found;
    ForEachRelayedBlock(spec, rank, [&](int src, int dst) {
      const uint64_t bytes = AllToAllBytes(spec, src, dst);
      if (!found && offset < position + bytes) {
        found = SendBlockOffset(spec, src, dst) + (offset - position);
      }
      position += bytes;
    });
    if (found) return *found;
  }
  throw outside();
}

}  // namespace nbox::coll
