// NCCL's double binary tree (Sanders, Speck and Träff, "Two-tree algorithms for full bandwidth
// broadcast, reduction and scan", Parallel Computing 2009; NCCL 2.4's all-reduce).
//
// Tree 0 is an in-order binary tree over ranks 0..W-1: rank r > 0 with lowest set bit b has
// the children r - b/2 and r + c, c the largest of b/2, b/4, ..., 1 with r + c < W (none
// when b = 1), and the parent (r with bit b cleared and bit 2b set) if that is < W, else r - b;
// rank 0 is the root, with the single child 2^floor(log2(W-1)). Its inner nodes are even
// ranks, its leaves the odd ones. Tree 1 moves every rank to where tree 0 has a leaf:
// mirrored (r -> W-1-r) for even W, shifted by one (r -> r+1 mod W) for odd W, so (but for
// rank 0 at odd W) a rank is an inner node of one tree only, and the two trees together keep
// every rank's link about equally busy.
//
// All-reduce (one message hop per tree edge and direction): every chunk goes up its tree,
// each node adding its children's copies to its own before passing the sum to its parent, and
// comes back down from the root, each node overwriting its copy with its parent's and passing
// it on. Channel c runs tree c mod 2 on its contiguous 1/channels slice (NCCL runs tree 0 on
// one half of its channels and tree 1 on the other); one channel is a single binary tree.
// Chunks of at most chunk_bytes pipeline up and down at once. With ranks_per_server the trees
// span servers and chain the GPUs inside each, as NCCL's (AllReduceTreeLinks).
#pragma once

#include <array>

#include "collectives/schedule.h"

namespace nbox::coll {

struct TreeLinks {
  int parent = -1;                          // -1 at the root
  std::array<int, 3> children{-1, -1, -1};  // -1 where there is none
};

// Rank `rank`'s place in tree `tree` (0 or 1) over `world` ranks.
TreeLinks DoubleBinaryTreeLinks(int world, int tree, int rank);

// Edges from the root to the deepest leaf of tree `tree`.
int TreeDepth(int world, int tree);

// Rank `rank`'s place in channel `channel`'s all-reduce tree. Without servers
// (ranks_per_server = 0) the flat tree channel mod 2. With servers of G ranks (world a
// multiple of G), NCCL's shape: tree channel mod 2 over the servers joins one GPU of each,
// local index (channel / 2) mod G (the same in every server, so the edges between servers stay
// on one rail, and channels spread over rails), and a chain through the server's other GPUs
// hangs below it (head -> next local index -> ...): up to two children servers and the chain.
TreeLinks AllReduceTreeLinks(int world, int ranks_per_server, int channel, int rank);

// The deepest all-reduce tree of the channels in use: TreeDepth of the servers' (or ranks')
// trees, plus G - 1 chain hops with servers.
int AllReduceTreeDepth(int world, int ranks_per_server, int channels);

// Rank `rank`'s place in tree `tree` of the two-tree broadcast and reduce rooted at `root`
// (Sanders, Speck and Träff 2009): the W - 1 other ranks, in ring order from root + 1, form
// the double binary tree of W - 1 ranks (DoubleBinaryTreeLinks), and the root is the parent of
// each tree's own root. The two trees stay complementary (a rank inner in one is a leaf in the
// other), so every port carries at most two chunk messages per pair of chunks: full bandwidth.
// (Re-rooting the W-rank trees by a shift instead loses that: for even W both trees then have
// the same inner ranks, whose ports carry twice the load.)
TreeLinks RootedTreeLinks(int world, int tree, int root, int rank);

// Edges from the root to the deepest leaf of the rooted trees in use (tree 0, and tree 1 when
// channels > 1): 1 + TreeDepth of the W - 1 other ranks' tree; 0 for one rank.
int RootedTreeDepth(int world, int channels);

// One rank's schedule for spec.algorithm == kTree and op kAllReduce, kBroadcast or kReduce;
// `spec` must be valid and rank in range. Broadcast (the two-tree broadcast of Sanders, Speck
// and Träff): channel c's slice goes down tree c mod 2 re-rooted at spec.root, chunks
// pipelined, each rank receiving a chunk from its parent and passing it to its children.
// Reduce: the same trees the other way, each rank adding its children's chunks to its own and
// passing the sum to its parent, so the root ends with the sum (the all-reduce's up phase).
RankSchedule BuildTreeRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildTreeRankSchedule(spec, r) has for any rank r, without building it: it
// grows with the chunks of one rank's buffer, not with the world.
uint64_t TreeStepBound(const CollectiveSpec& spec);

}  // namespace nbox::coll
