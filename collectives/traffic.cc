// Each closed form below mirrors the file that builds the schedule (named at each function);
// traffic_test.cc checks every one against the schedules' Send steps.
#include "collectives/traffic.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/all_to_all.h"
#include "collectives/chain.h"
#include "collectives/halving_doubling.h"
#include "collectives/layout.h"
#include "collectives/ring_order.h"
#include "collectives/tree.h"

namespace nbox::coll {
namespace {

int Mod(int value, int modulus) {
  return ((value % modulus) + modulus) % modulus;
}

// Elements in parts [first, first + n) (cyclically, n <= parts) of `count` elements cut by
// SplitEvenly into `parts`: every part has count / parts, the first count % parts one more.
uint64_t PartsElements(uint64_t count, uint64_t parts, uint64_t first, uint64_t n) {
  const uint64_t longer = count % parts;
  auto longer_below = [&](uint64_t end) { return std::min(end, longer); };  // in [0, end)
  const uint64_t end = first + n;
  uint64_t extra = 0;
  if (end <= parts) {
    extra = longer_below(end) - longer_below(first);
  } else {
    extra = (longer - longer_below(first)) + longer_below(end - parts);
  }
  return n * (count / parts) + extra;
}

// Elements of block (segment, channel) as the ring and direct schedules cut the buffer:
// channel-major for all-reduce (a contiguous slice per channel, cut into W segments),
// segment-major otherwise (W segments, each cut into channel slices).
uint64_t BlockElements(const CollectiveSpec& spec, int segment, int channel) {
  const uint64_t elements = spec.bytes / spec.element_bytes;
  if (spec.op == CollectiveOp::kAllReduce) {
    return SplitEvenly(SplitEvenly(elements, spec.channels, channel).count, spec.world_size,
                       segment)
        .count;
  }
  return SplitEvenly(SplitEvenly(elements, spec.world_size, segment).count, spec.channels, channel)
      .count;
}

// ring.cc: channel c's ring; reduce-scatter sends every segment but the rank's own, all-gather
// every segment but its next rank's. All-reduce cuts channel-major (a contiguous slice per
// channel, cut into W segments), all-gather and reduce-scatter segment-major (W segments, each
// cut into channel slices).
void RingLanes(const CollectiveSpec& spec, int rank,
               const std::function<void(const LaneTraffic&)>& visit) {
  const int world = spec.world_size;
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const RingOrder ring(spec, channel);
    const int next = ring.Next(rank);
    auto block = [&](int segment) { return BlockElements(spec, segment, channel); };
    uint64_t channel_elements = 0;  // every segment's block on this channel
    if (spec.op == CollectiveOp::kAllReduce) {
      channel_elements = SplitEvenly(elements, spec.channels, channel).count;
    } else {
      // W segments of q or q + 1 elements, each cut into channel slices.
      const uint64_t q = elements / world;
      const uint64_t longer = elements % world;
      channel_elements = longer * SplitEvenly(q + 1, spec.channels, channel).count +
                         (world - longer) * SplitEvenly(q, spec.channels, channel).count;
    }
    uint64_t sent = 0;
    if (reduce_scatter) sent += channel_elements - block(rank);
    if (all_gather) sent += channel_elements - block(next);
    if (sent > 0) visit({rank, next, channel, sent * spec.element_bytes, 0});
  }
}

// chain.cc: every rank but the chain's last (broadcast: root - 1; reduce: the root) sends its
// channel's slice to the next.
void ChainLanes(const CollectiveSpec& spec, int rank,
                const std::function<void(const LaneTraffic&)>& visit) {
  const int world = spec.world_size;
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const int next = (rank + 1) % world;
  if (next == ChainFirst(spec)) return;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const uint64_t slice = SplitEvenly(elements, spec.channels, channel).count;
    if (slice > 0) visit({rank, next, channel, slice * spec.element_bytes, 0});
  }
}

// hierarchical.cc: channel c's slice is cut into W cells, cell (l, m) = l * S + m. Inside the
// server, reduce-scatter sends every segment l (S cells) but the rank's own local index,
// all-gather every one but local + 1; on the rail, every cell (local, m) but m = server, then
// every one but m = server + 1.
void HierarchicalLanes(const CollectiveSpec& spec, int rank,
                       const std::function<void(const LaneTraffic&)>& visit) {
  const int world = spec.world_size;
  const int gpus = spec.ranks_per_server;
  const int servers = world / gpus;
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const int server = rank / gpus;
  const int local = rank % gpus;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const uint64_t slice = SplitEvenly(elements, spec.channels, channel).count;
    auto segment = [&](int l) {
      return PartsElements(slice, world, uint64_t(l) * servers, servers);
    };
    auto cell = [&](int m) {
      return PartsElements(slice, world, uint64_t(local) * servers + m, 1);
    };
    if (gpus > 1) {
      const uint64_t sent = 2 * slice - segment(local) - segment(Mod(local + 1, gpus));
      if (sent > 0) {
        visit({rank, server * gpus + Mod(local + 1, gpus), channel, sent * spec.element_bytes, 0});
      }
    }
    if (servers > 1) {
      const uint64_t rail = segment(local);
      const uint64_t sent = 2 * rail - cell(server) - cell(Mod(server + 1, servers));
      if (sent > 0) {
        visit(
            {rank, Mod(server + 1, servers) * gpus + local, channel, sent * spec.element_bytes, 1});
      }
    }
  }
}

// all_to_all.cc: every block is cut into channel slices; the direct algorithm sends block
// (src, dst) straight, the hierarchical one relays a block that changes both server and
// local index through the sender's GPU of the destination's local index.
void AllToAllLanes(const CollectiveSpec& spec, int src,
                   const std::function<void(const LaneTraffic&)>& visit) {
  const int world = spec.world_size;
  const bool hierarchical = spec.algorithm == Algorithm::kHierarchical;
  const int gpus = hierarchical ? spec.ranks_per_server : 1;
  std::vector<uint64_t> lane(static_cast<size_t>(world) * spec.channels);  // by dst, channel
  auto add = [&](int dst, uint64_t block_elements) {
    for (int channel = 0; channel < spec.channels; ++channel) {
      lane[static_cast<size_t>(dst) * spec.channels + channel] +=
          SplitEvenly(block_elements, spec.channels, channel).count;
    }
  };
  for (int dst = 0; dst < world; ++dst) {
    if (dst == src) continue;
    const uint64_t own = AllToAllBytes(spec, src, dst) / spec.element_bytes;
    const bool relayed = hierarchical && src / gpus != dst / gpus && src % gpus != dst % gpus;
    if (!relayed) {
      add(dst, own);
      continue;
    }
    add((src / gpus) * gpus + dst % gpus, own);  // first hop, inside src's server
  }
  if (hierarchical) {
    // Second hops this rank makes for the blocks it relays: (a, i) -> (b, src's local)
    // through src, for every server b != a = src's server and local i != src's local.
    const int server = src / gpus;
    const int local = src % gpus;
    for (int b = 0; b < world / gpus; ++b) {
      if (b == server) continue;
      const int dst = b * gpus + local;
      for (int i = 0; i < gpus; ++i) {
        if (i == local) continue;
        add(dst, AllToAllBytes(spec, server * gpus + i, dst) / spec.element_bytes);
      }
    }
  }
  for (int dst = 0; dst < world; ++dst) {
    for (int channel = 0; channel < spec.channels; ++channel) {
      const uint64_t elements = lane[static_cast<size_t>(dst) * spec.channels + channel];
      if (elements == 0) continue;
      const int stage = hierarchical && src / gpus != dst / gpus ? 1 : 0;
      visit({src, dst, channel, elements * spec.element_bytes, stage});
    }
  }
}

// direct.cc: to every peer, reduce-scatter sends the peer's segment and all-gather the rank's
// own, each cut like the ring's (channel-major for all-reduce, segment-major otherwise).
void DirectLanes(const CollectiveSpec& spec, int rank,
                 const std::function<void(const LaneTraffic&)>& visit) {
  const int world = spec.world_size;
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;
  for (int k = 1; k < world; ++k) {
    const int dst = (rank + k) % world;
    for (int channel = 0; channel < spec.channels; ++channel) {
      const uint64_t sent = (reduce_scatter ? BlockElements(spec, dst, channel) : 0) +
                            (all_gather ? BlockElements(spec, rank, channel) : 0);
      if (sent > 0) visit(LaneTraffic{rank, dst, channel, sent * spec.element_bytes, 0});
    }
  }
}

// Elements of segments [first, last) on `channel`, cut like BlockElements, in O(1).
uint64_t SegmentsElements(const CollectiveSpec& spec, int first, int last, int channel) {
  const uint64_t elements = spec.bytes / spec.element_bytes;
  const auto world = static_cast<uint64_t>(spec.world_size);
  if (spec.op == CollectiveOp::kAllReduce) {
    return PartsElements(SplitEvenly(elements, spec.channels, channel).count, world, first,
                         last - first);
  }
  // Segments of q + 1 elements come first (`longer` of them), then segments of q.
  const uint64_t q = elements / world;
  const auto longer = static_cast<int>(elements % world);
  const int long_count = std::max(0, std::min(last, longer) - first);
  const int short_count = (last - first) - long_count;
  return long_count * SplitEvenly(q + 1, spec.channels, channel).count +
         short_count * SplitEvenly(q, spec.channels, channel).count;
}

// halving_doubling.cc: a folded rank sends its host its whole buffer (its segment for
// all-gather), stage 0; round j's partner (distance P / 2^(j+1)) gets the half given away in
// recursive halving and the range held in recursive doubling, one stage per round; the host
// answers its folded rank (the whole buffer, its segment, or every other segment), the last
// stage.
void HalvingDoublingLanes(const CollectiveSpec& spec, int rank,
                          const std::function<void(const LaneTraffic&)>& visit) {
  const HalvingDoublingRanks ranks(spec.world_size);
  const int world = spec.world_size;
  const bool reduce_scatter = spec.op != CollectiveOp::kAllGather;
  const bool all_gather = spec.op != CollectiveOp::kReduceScatter;
  const int first_round = ranks.virtual_ranks() < world ? 1 : 0;  // after the fold stage
  auto send = [&](int dst, int stage, auto segments_elements) {
    for (int channel = 0; channel < spec.channels; ++channel) {
      const uint64_t sent = segments_elements(channel);
      if (sent > 0) visit(LaneTraffic{rank, dst, channel, sent * spec.element_bytes, stage});
    }
  };
  auto range = [&](int first, int last) {
    return
        [&spec, first, last](int channel) { return SegmentsElements(spec, first, last, channel); };
  };
  const int v = ranks.VirtualOf(rank);
  if (v < 0) {
    send(rank + 1, 0, reduce_scatter ? range(0, world) : range(rank, rank + 1));
    return;
  }
  int low = 0;  // recursive halving's kept range, as halving_doubling.cc tracks it
  int round = 0;
  for (int mask = ranks.virtual_ranks() / 2; mask >= 1; mask /= 2, ++round) {
    const bool keeps_lower = (v & mask) == 0;
    const int given = keeps_lower ? low + mask : low;
    const int held = v & ~(mask - 1);
    const auto given_elements = range(ranks.FirstSegment(given), ranks.FirstSegment(given + mask));
    const auto held_elements = range(ranks.FirstSegment(held), ranks.FirstSegment(held + mask));
    send(ranks.RankOf(v ^ mask), first_round + round, [&](int channel) {
      return (reduce_scatter ? given_elements(channel) : 0) +
             (all_gather ? held_elements(channel) : 0);
    });
    low = keeps_lower ? low : low + mask;
  }
  const int folded = ranks.FoldedInto(rank);
  if (folded < 0) return;
  const int last_stage = first_round + ranks.rounds();
  if (spec.op == CollectiveOp::kAllGather) {
    send(folded, last_stage, [&](int channel) {
      return SegmentsElements(spec, 0, world, channel) -
             SegmentsElements(spec, folded, folded + 1, channel);
    });
  } else {
    send(folded, last_stage, all_gather ? range(0, world) : range(folded, folded + 1));
  }
}

// tree.cc: on channel c, a rank sends its slice once to its parent in tree c mod 2 (but in a
// broadcast) and once to each child (but in a reduce); a broadcast's and a reduce's trees are
// re-rooted at their root.
TreeLinks TreeLinksOf(const CollectiveSpec& spec, int channel, int rank) {
  if (spec.op == CollectiveOp::kAllReduce) {
    return AllReduceTreeLinks(spec.world_size, spec.ranks_per_server, channel, rank);
  }
  TreeLinks links = RootedTreeLinks(spec.world_size, channel % 2, spec.root, rank);
  if (spec.op == CollectiveOp::kBroadcast) links.parent = -1;           // nothing goes up
  if (spec.op == CollectiveOp::kReduce) links.children = {-1, -1, -1};  // nothing goes down
  return links;
}

void TreeLanes(const CollectiveSpec& spec, int rank,
               const std::function<void(const LaneTraffic&)>& visit) {
  const uint64_t elements = spec.bytes / spec.element_bytes;
  for (int channel = 0; channel < spec.channels; ++channel) {
    const uint64_t slice = SplitEvenly(elements, spec.channels, channel).count;
    if (slice == 0) continue;
    const TreeLinks links = TreeLinksOf(spec, channel, rank);
    for (int peer : {links.parent, links.children[0], links.children[1], links.children[2]}) {
      if (peer >= 0) visit(LaneTraffic{rank, peer, channel, slice * spec.element_bytes, 0});
    }
  }
}

// Chunks of channel `channel`'s slice when the whole buffer is one segment (tree.cc,
// chain.cc).
uint64_t SliceChunks(const CollectiveSpec& spec, int channel) {
  const uint64_t slice = SplitEvenly(spec.bytes / spec.element_bytes, spec.channels, channel).count;
  const uint64_t chunk_elements = spec.chunk_bytes / spec.element_bytes;
  if (slice == 0) return 0;
  return chunk_elements == 0 ? 1 : (slice + chunk_elements - 1) / chunk_elements;
}

bool IsAllToAllOp(CollectiveOp op) {
  return op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV;
}

void ForEachLaneFrom(const CollectiveSpec& spec, int src,
                     const std::function<void(const LaneTraffic&)>& visit) {
  if (spec.world_size == 1) return;
  if (IsAllToAllOp(spec.op)) {
    AllToAllLanes(spec, src, visit);
  } else if (spec.algorithm == Algorithm::kHierarchical) {
    HierarchicalLanes(spec, src, visit);
  } else if (spec.algorithm == Algorithm::kDirect) {
    DirectLanes(spec, src, visit);
  } else if (spec.algorithm == Algorithm::kHalvingDoubling) {
    HalvingDoublingLanes(spec, src, visit);
  } else if (spec.algorithm == Algorithm::kTree) {
    TreeLanes(spec, src, visit);
  } else if (IsRooted(spec.op)) {
    ChainLanes(spec, src, visit);
  } else {
    RingLanes(spec, src, visit);
  }
}

}  // namespace

void ForEachLane(const CollectiveSpec& spec, const std::function<void(const LaneTraffic&)>& visit) {
  ValidateSpec(spec);
  for (int src = 0; src < spec.world_size; ++src) ForEachLaneFrom(spec, src, visit);
}

void ForEachLaneOf(const CollectiveSpec& spec, int src,
                   const std::function<void(const LaneTraffic&)>& visit) {
  ValidateSpec(spec);
  if (src < 0 || src >= spec.world_size) {
    throw std::invalid_argument("ForEachLaneOf: rank " + std::to_string(src) + " is not in 0.." +
                                std::to_string(spec.world_size - 1));
  }
  ForEachLaneFrom(spec, src, visit);
}

CriticalPath CriticalPathOf(const CollectiveSpec& spec) {
  ValidateSpec(spec);
  const int world = spec.world_size;
  if (IsAllToAllOp(spec.op)) {
    CriticalPath path;
    path.steps =
        spec.algorithm == Algorithm::kHierarchical ? std::vector<int>{1, 1} : std::vector<int>{1};
    path.overlap = CriticalPath::Overlap::kParallel;
    return path;
  }
  if (spec.algorithm == Algorithm::kHierarchical) {
    const int gpus = spec.ranks_per_server;
    return CriticalPath{{2 * (gpus - 1), 2 * (world / gpus - 1)}};
  }
  if (spec.algorithm == Algorithm::kDirect) {
    // direct.cc: every lane at once, one message hop per phase.
    CriticalPath path{{spec.op == CollectiveOp::kAllReduce ? 2 : 1}};
    path.overlap = CriticalPath::Overlap::kParallel;
    return path;
  }
  if (spec.algorithm == Algorithm::kHalvingDoubling) {
    // halving_doubling.cc: a hop per round (two for all-reduce: halving, then doubling with the
    // same partner), and one before and after the rounds when ranks are folded.
    const HalvingDoublingRanks ranks(world);
    const int per_round = spec.op == CollectiveOp::kAllReduce ? 2 : 1;
    CriticalPath path{std::vector<int>(ranks.rounds(), per_round)};
    if (ranks.virtual_ranks() < world) {
      path.steps.insert(path.steps.begin(), 1);
      path.steps.push_back(1);
    }
    path.overlap = CriticalPath::Overlap::kSequential;
    return path;
  }
  if (spec.algorithm == Algorithm::kTree && world > 1) {
    // tree.cc: a chunk goes up and down the deeper tree in use, 2 x depth hops (a broadcast or
    // a reduce: one way, depth hops), pipelined like the chains. The fill counts each of the
    // first chunk's 2 x depth - 1 further hops as one chunk message over the busiest port at full
    // rate (its busy time over M, the chunk messages it sends): optimistic once many chunks share
    // the ports (tree.h).
    const int hops = spec.op != CollectiveOp::kAllReduce
                         ? RootedTreeDepth(world, spec.channels)
                         : 2 * AllReduceTreeDepth(world, spec.ranks_per_server, spec.channels);
    uint64_t busiest_messages = 0;
    for (int rank = 0; rank < world; ++rank) {
      uint64_t messages = 0;
      for (int channel = 0; channel < spec.channels; ++channel) {
        const TreeLinks links = TreeLinksOf(spec, channel, rank);
        const int neighbours = (links.parent >= 0) + (links.children[0] >= 0) +
                               (links.children[1] >= 0) + (links.children[2] >= 0);
        messages += SliceChunks(spec, channel) * neighbours;
      }
      busiest_messages = std::max(busiest_messages, messages);
    }
    CriticalPath path{{hops}};
    path.overlap = CriticalPath::Overlap::kChain;
    path.bandwidth_scale =
        1 + static_cast<double>(hops - 1) / std::max<uint64_t>(1, busiest_messages);
    return path;
  }
  if (spec.op == CollectiveOp::kAllReduce) return CriticalPath{{2 * (world - 1)}};
  if (IsRooted(spec.op) && world > 1) {
    // chain.cc: channel 0's slice is the largest; chunks of at most chunk_bytes.
    const uint64_t chunks = std::max<uint64_t>(1, SliceChunks(spec, 0));
    CriticalPath path{{world - 1}};
    path.overlap = CriticalPath::Overlap::kChain;
    path.bandwidth_scale = 1 + static_cast<double>(world - 2) / chunks;
    return path;
  }
  return CriticalPath{{world - 1}};
}

}  // namespace nbox::coll
