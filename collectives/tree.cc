#include "collectives/tree.h"

#include <algorithm>
#include <vector>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {
namespace {

// Tree 0 (tree.h).
TreeLinks InOrderTreeLinks(int world, int rank) {
  TreeLinks links;
  if (world == 1) return links;
  if (rank == 0) {
    int child = 1;
    while (child * 2 < world) child *= 2;
    links.children[0] = child;
    return links;
  }
  const int bit = rank & -rank;
  // The parent clears bit b and sets bit 2b, unless that leaves the world: then it only
  // clears b.
  const int up = (rank ^ bit) | (bit * 2);
  links.parent = up < world ? up : rank ^ bit;
  if (bit > 1) {
    links.children[0] = rank - bit / 2;
    for (int step = bit / 2; step >= 1; step /= 2) {
      if (rank + step < world) {
        links.children[1] = rank + step;
        break;
      }
    }
  }
  return links;
}

int Mapped(int rank, int world, bool mirror) {
  if (rank < 0) return -1;
  return mirror ? world - 1 - rank : (rank + 1) % world;
}

}  // namespace

TreeLinks DoubleBinaryTreeLinks(int world, int tree, int rank) {
  if (tree == 0) return InOrderTreeLinks(world, rank);
  // Tree 1: rank r sits where tree 0 has position p(r), every link mapped back.
  const bool mirror = world % 2 == 0;
  const int position = mirror ? world - 1 - rank : (rank - 1 + world) % world;
  const TreeLinks base = InOrderTreeLinks(world, position);
  TreeLinks links;
  links.parent = Mapped(base.parent, world, mirror);
  links.children = {Mapped(base.children[0], world, mirror),
                    Mapped(base.children[1], world, mirror), -1};
  return links;
}

TreeLinks RootedTreeLinks(int world, int tree, int root, int rank) {
  TreeLinks links;
  if (world == 1) return links;
  const int others = world - 1;
  // Position p among the others is rank root + 1 + p.
  auto rank_of = [&](int position) { return position < 0 ? -1 : (root + 1 + position) % world; };
  if (rank == root) {
    // The own root of tree `tree` over the others: position 0 in tree 0; in tree 1 the
    // position tree 0's root maps to (DoubleBinaryTreeLinks: mirrored or shifted by one).
    const int own_root = tree == 0 ? 0 : (others % 2 == 0 ? others - 1 : 1 % others);
    links.children[0] = rank_of(own_root);
    return links;
  }
  const TreeLinks base = DoubleBinaryTreeLinks(others, tree, (rank - root - 1 + world) % world);
  links.parent = base.parent < 0 ? root : rank_of(base.parent);
  for (size_t i = 0; i < links.children.size(); ++i) links.children[i] = rank_of(base.children[i]);
  return links;
}

int RootedTreeDepth(int world, int channels) {
  if (world == 1) return 0;
  return 1 + std::max(TreeDepth(world - 1, 0), channels > 1 ? TreeDepth(world - 1, 1) : 0);
}

int TreeDepth(int world, int tree) {
  int depth = 0;
  for (int rank = 0; rank < world; ++rank) {
    int hops = 0;
    for (int node = rank; DoubleBinaryTreeLinks(world, tree, node).parent >= 0;
         node = DoubleBinaryTreeLinks(world, tree, node).parent) {
      ++hops;
    }
    depth = std::max(depth, hops);
  }
  return depth;
}

TreeLinks AllReduceTreeLinks(int world, int ranks_per_server, int channel, int rank) {
  const int tree = channel % 2;
  if (ranks_per_server <= 0) return DoubleBinaryTreeLinks(world, tree, rank);
  const int gpus = ranks_per_server;
  const int server = rank / gpus;
  const int head = (channel / 2) % gpus;
  const int position = (rank % gpus - head + gpus) % gpus;  // along the server's chain
  auto gpu = [&](int on_server, int at_position) {
    return on_server * gpus + (head + at_position) % gpus;
  };
  TreeLinks links;
  const int next = position + 1 < gpus ? gpu(server, position + 1) : -1;
  if (position > 0) {
    links.parent = gpu(server, position - 1);
    links.children[0] = next;
    return links;
  }
  const TreeLinks servers = DoubleBinaryTreeLinks(world / gpus, tree, server);
  links.parent = servers.parent >= 0 ? gpu(servers.parent, 0) : -1;
  links.children = {servers.children[0] >= 0 ? gpu(servers.children[0], 0) : -1,
                    servers.children[1] >= 0 ? gpu(servers.children[1], 0) : -1, next};
  return links;
}

int AllReduceTreeDepth(int world, int ranks_per_server, int channels) {
  const int gpus = std::max(ranks_per_server, 1);
  const int nodes = world / gpus;
  const int depth = std::max(TreeDepth(nodes, 0), channels > 1 ? TreeDepth(nodes, 1) : 0);
  return depth + gpus - 1;
}

uint64_t TreeStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  // Per chunk a rank receives from and sends to each of at most four neighbours (a server's
  // head: its parent, two child servers and its chain).
  return 8 * ChunkCountBound(one_segment);
}

RankSchedule BuildTreeRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  if (world == 1) return RankSchedule{rank, spec.bytes, {}};
  CheckStepBound(spec, TreeStepBound(spec), "tree");
  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  const BlockGrid grid(one_segment, BlockOrder::kChannelMajor);
  // An all-reduce runs each channel's tree as it is (over servers when there are), up then
  // down; a broadcast (down) and a reduce (up) re-root the flat trees at their root.
  const bool up = spec.op != CollectiveOp::kBroadcast;
  const bool down = spec.op != CollectiveOp::kReduce;
  const bool rooted = spec.op != CollectiveOp::kAllReduce;
  std::vector<TreeLinks> trees;
  for (int channel = 0; channel < spec.channels; ++channel) {
    trees.push_back(rooted ? RootedTreeLinks(world, channel % 2, spec.root, rank)
                           : AllReduceTreeLinks(world, spec.ranks_per_server, channel, rank));
  }
  RankScheduleBuilder steps(rank, spec.bytes, grid.region_count());
  // Chunk-major, as the chains.
  ForEachChunkChunkMajor(grid, 0, spec.channels, [&](int channel, const Region& chunk) {
    const TreeLinks& links = trees[channel];
    if (up) {
      for (int child : links.children) {
        if (child >= 0) steps.AddRecv(child, channel, chunk, true);
      }
      if (links.parent >= 0) steps.AddSend(links.parent, channel, chunk);
    }
    if (down) {
      if (links.parent >= 0) steps.AddRecv(links.parent, channel, chunk, false);
      for (int child : links.children) {
        if (child >= 0) steps.AddSend(child, channel, chunk);
      }
    }
  });
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
