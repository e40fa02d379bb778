#include "collectives/tree.h"

#include <algorithm>

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
                    Mapped(base.children[1], world, mirror)};
  return links;
}

TreeLinks RootedTreeLinks(int world, int tree, int root, int rank) {
  // The tree's own root: rank 0 in tree 0; in tree 1 the rank tree 0's root maps to.
  const int own_root = tree == 0 ? 0 : (world % 2 == 0 ? world - 1 : 1 % world);
  auto shift = [world](int r, int by) { return r < 0 ? -1 : ((r + by) % world + world) % world; };
  const TreeLinks base = DoubleBinaryTreeLinks(world, tree, shift(rank, own_root - root));
  return TreeLinks{
      shift(base.parent, root - own_root),
      {shift(base.children[0], root - own_root), shift(base.children[1], root - own_root)}};
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

RankSchedule BuildTreeRankSchedule(const CollectiveSpec& spec, int rank) {
  const int world = spec.world_size;
  if (world == 1) return RankSchedule{rank, spec.bytes, {}};
  CollectiveSpec one_segment = spec;
  one_segment.world_size = 1;
  // Per chunk a rank receives from and sends to each of at most three neighbours.
  CheckStepBound(one_segment, 6, "tree");
  const BlockGrid grid(one_segment, BlockOrder::kChannelMajor);
  const bool broadcast = spec.op == CollectiveOp::kBroadcast;
  const int root = broadcast ? spec.root : 0;
  // An all-reduce runs the trees as they are; a broadcast re-roots them at its root.
  auto links = [&](int tree) {
    return broadcast ? RootedTreeLinks(world, tree, root, rank)
                     : DoubleBinaryTreeLinks(world, tree, rank);
  };
  const std::array<TreeLinks, 2> trees = {links(0), links(1)};
  RankScheduleBuilder steps(rank, spec.bytes, grid.region_count());
  // Chunk-major, as the broadcast.
  ForEachChunkChunkMajor(grid, 0, spec.channels, [&](int channel, const Region& chunk) {
    const TreeLinks& links = trees[channel % 2];
    if (!broadcast) {
      for (int child : links.children) {
        if (child >= 0) steps.AddRecv(child, channel, chunk, true);
      }
      if (links.parent >= 0) steps.AddSend(links.parent, channel, chunk);
    }
    if (links.parent >= 0) steps.AddRecv(links.parent, channel, chunk, false);
    for (int child : links.children) {
      if (child >= 0) steps.AddSend(child, channel, chunk);
    }
  });
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
