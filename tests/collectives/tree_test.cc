// NCCL's double binary tree (tree.h): the trees' shape against hand-drawn small cases and the
// invariants every W up to 64 must keep, the serial result on real buffers under random
// interleavings, and the bytes a tree all-reduce moves (every edge carries each channel's
// slice once up and once down).
#include "collectives/tree.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::CheckRun;

CollectiveSpec Tree(int world, uint64_t bytes, int channels, uint64_t chunk,
                    uint32_t element_bytes = 4) {
  CollectiveSpec spec =
      testing::Spec(CollectiveOp::kAllReduce, world, bytes, channels, chunk, element_bytes);
  spec.algorithm = Algorithm::kTree;
  return spec;
}

std::set<int> Children(const TreeLinks& links) {
  std::set<int> children;
  for (int child : links.children) {
    if (child >= 0) children.insert(child);
  }
  return children;
}

// Drawn by hand from the rule in tree.h. W = 6, tree 0: 0 -> 4, 4 -> {2, 5}, 2 -> {1, 3}.
// Tree 1 mirrors it (r -> 5 - r): 5 -> 1, 1 -> {3, 0}, 3 -> {4, 2}. Inner nodes {0, 4, 2} and
// {5, 1, 3}: each rank is inner in one tree only.
TEST(TreeShape, SixRanksAsDrawn) {
  const std::array<std::array<int, 6>, 2> parents = {{{-1, 2, 4, 2, 0, 4}, {1, 5, 3, 1, 3, -1}}};
  const std::array<std::array<std::set<int>, 6>, 2> children = {
      {{{{4}, {}, {1, 3}, {}, {2, 5}, {}}}, {{{}, {0, 3}, {}, {2, 4}, {}, {1}}}}};
  for (int tree = 0; tree < 2; ++tree) {
    for (int rank = 0; rank < 6; ++rank) {
      const TreeLinks links = DoubleBinaryTreeLinks(6, tree, rank);
      EXPECT_EQ(links.parent, parents[tree][rank]) << "tree " << tree << " rank " << rank;
      EXPECT_EQ(Children(links), children[tree][rank]) << "tree " << tree << " rank " << rank;
    }
    EXPECT_EQ(TreeDepth(6, tree), 3);
  }
}

// W = 5 (odd): tree 1 shifts tree 0 (0 -> 4, 4 -> 2, 2 -> {1, 3}) by one rank: 1 -> 0,
// 0 -> 3, 3 -> {2, 4}.
TEST(TreeShape, OddWorldsShiftTheSecondTree) {
  EXPECT_EQ(DoubleBinaryTreeLinks(5, 0, 4).parent, 0);
  EXPECT_EQ(Children(DoubleBinaryTreeLinks(5, 0, 4)), (std::set<int>{2}));
  EXPECT_EQ(DoubleBinaryTreeLinks(5, 1, 1).parent, -1);
  EXPECT_EQ(Children(DoubleBinaryTreeLinks(5, 1, 1)), (std::set<int>{0}));
  EXPECT_EQ(Children(DoubleBinaryTreeLinks(5, 1, 3)), (std::set<int>{2, 4}));
}

// For every W up to 64 and both trees: one root, every parent lists its child, every rank
// reaches the root, at most two children, and a depth of at most floor(log2 W) + 1.
TEST(TreeShape, EveryWorldIsOneBinaryTree) {
  for (int world = 1; world <= 64; ++world) {
    int log2 = 0;
    while ((2 << log2) <= world) ++log2;
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      for (int rank = 0; rank < world; ++rank) {
        const TreeLinks links = DoubleBinaryTreeLinks(world, tree, rank);
        if (links.parent < 0) {
          ++roots;
        } else {
          EXPECT_TRUE(Children(DoubleBinaryTreeLinks(world, tree, links.parent)).count(rank))
              << "W=" << world << " tree " << tree << " rank " << rank;
        }
        for (int child : Children(links)) {
          EXPECT_EQ(DoubleBinaryTreeLinks(world, tree, child).parent, rank);
        }
        int hops = 0;
        for (int node = rank; DoubleBinaryTreeLinks(world, tree, node).parent >= 0 && hops <= world;
             node = DoubleBinaryTreeLinks(world, tree, node).parent) {
          ++hops;
        }
        EXPECT_LE(hops, log2 + 1) << "W=" << world << " tree " << tree << " rank " << rank;
      }
      EXPECT_EQ(roots, 1) << "W=" << world << " tree " << tree;
    }
  }
}

// Two servers of 4 GPUs, drawn by hand from tree.h. Channel 0 (tree 0 over the servers:
// server 0 the root, server 1 its child; heads at local index 0): 0 -> {4, 1}, 1 -> 2 -> 3,
// 4 -> 5 -> 6 -> 7. Channel 1 (tree 1: server 1 the root): 4 -> {0, 5}, 0 -> 1. Channel 2 (tree
// 0, heads at local index 1): 1 -> {5, 2}, 2 -> 3 -> 0, 5 -> 6 -> 7 -> 4. Depth: 1 + 3.
TEST(TreeShape, ServersJoinOneGpuEachAndChainTheRest) {
  auto links = [](int channel, int rank) { return AllReduceTreeLinks(8, 4, channel, rank); };
  EXPECT_EQ(links(0, 0).parent, -1);
  EXPECT_EQ(Children(links(0, 0)), (std::set<int>{4, 1}));
  EXPECT_EQ(links(0, 2).parent, 1);
  EXPECT_EQ(Children(links(0, 2)), (std::set<int>{3}));
  EXPECT_EQ(links(0, 4).parent, 0);
  EXPECT_EQ(Children(links(0, 4)), (std::set<int>{5}));
  EXPECT_EQ(Children(links(0, 7)), (std::set<int>{}));
  EXPECT_EQ(links(1, 4).parent, -1);
  EXPECT_EQ(Children(links(1, 4)), (std::set<int>{0, 5}));
  EXPECT_EQ(links(1, 0).parent, 4);
  EXPECT_EQ(Children(links(2, 1)), (std::set<int>{5, 2}));
  EXPECT_EQ(links(2, 0).parent, 3);
  EXPECT_EQ(links(2, 4).parent, 7);
  EXPECT_EQ(links(2, 5).parent, 1);
  EXPECT_EQ(AllReduceTreeDepth(8, 4, 2), 4);
  // Without servers the flat trees.
  EXPECT_EQ(AllReduceTreeLinks(6, 0, 1, 3).parent, DoubleBinaryTreeLinks(6, 1, 3).parent);
}

template <typename T>
class CollectivesTreeNumeric : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, int32_t>;
TYPED_TEST_SUITE(CollectivesTreeNumeric, ElementTypes);

// 1..9 ranks, 1 to 3 channels (one tree, both, both unevenly), sizes that divide and that do
// not, with and without chunking, three interleavings each.
TYPED_TEST(CollectivesTreeNumeric, MatchesTheSerialResult) {
  using T = TypeParam;
  int runs = 0;
  for (int world = 1; world <= 9; ++world) {
    for (int channels : {1, 2, 3}) {
      for (uint64_t elements : {uint64_t{2}, uint64_t(4 * channels), uint64_t(37)}) {
        for (uint64_t chunk : {uint64_t{0}, 3 * sizeof(T)}) {
          const Schedule schedule =
              BuildSchedule(Tree(world, elements * sizeof(T), channels, chunk, sizeof(T)));
          for (uint64_t seed = 0; seed < 3; ++seed) {
            ASSERT_EQ(CheckRun<T>(schedule, seed, elements + world), "")
                << "W=" << world << " channels=" << channels << " elements=" << elements
                << " chunk=" << chunk;
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 9 * 3 * 3 * 2 * 3);
}

// Trees over servers with chains inside: 2 to 4 servers of 2 to 4 GPUs, 1 to 4 channels (the
// heads move to the next local index every two channels).
TYPED_TEST(CollectivesTreeNumeric, OverServersMatchesTheSerialResult) {
  using T = TypeParam;
  for (int gpus : {2, 3, 4}) {
    for (int servers : {2, 3, 4}) {
      for (int channels : {1, 2, 4}) {
        CollectiveSpec spec =
            Tree(gpus * servers, 41 * sizeof(T), channels, 4 * sizeof(T), sizeof(T));
        spec.ranks_per_server = gpus;
        const Schedule schedule = BuildSchedule(spec);
        for (uint64_t seed = 0; seed < 2; ++seed) {
          ASSERT_EQ(CheckRun<T>(schedule, seed, 41 + gpus), "")
              << "G=" << gpus << " S=" << servers << " channels=" << channels;
        }
      }
    }
  }
}

// Each tree has W - 1 edges and every edge carries its channel's slice up and down once: the
// ranks send 2 (W - 1) buffers in all, and no rank more than 3 slices per channel.
TEST(TreeStructure, EveryEdgeCarriesItsSliceUpAndDown) {
  for (int world : {2, 5, 8, 13}) {
    for (int channels : {1, 2, 4}) {
      const uint64_t bytes = 4 * 1000 * channels;
      const Schedule schedule = BuildSchedule(Tree(world, bytes, channels, 512));
      uint64_t total = 0;
      for (const RankSchedule& rank : schedule.ranks) {
        uint64_t sent = 0;
        for (const Step& step : rank.steps) {
          if (step.kind == StepKind::kSend) sent += step.bytes;
        }
        EXPECT_LE(sent, 3 * bytes) << "W=" << world << " rank " << rank.rank;
        total += sent;
      }
      EXPECT_EQ(total, 2 * uint64_t(world - 1) * bytes) << "W=" << world;
    }
  }
}

// The two-tree broadcast from every root of 1..9 ranks, 1 to 3 channels, chunked or not:
// every rank ends with the root's input; the others start with a value no input has.
TEST(TreeBroadcast, EveryRankEndsWithTheRootsData) {
  for (int world = 1; world <= 9; ++world) {
    for (int root = 0; root < world; ++root) {
      for (int channels : {1, 2, 3}) {
        for (uint64_t chunk : {uint64_t{0}, uint64_t{12}}) {
          const uint64_t elements = 29;
          CollectiveSpec spec = Tree(world, 4 * elements, channels, chunk);
          spec.op = CollectiveOp::kBroadcast;
          spec.root = root;
          const Schedule schedule = BuildSchedule(spec);
          for (uint64_t seed : {1, 2}) ASSERT_EQ(testing::CheckBroadcastRun(schedule, seed), "");
        }
      }
    }
  }
}

// Rooted at 3 of 6: the other ranks 4, 5, 0, 1, 2 are positions 0..4 of the 5-rank double
// binary tree. Tree 0 of 5 (by hand, tree.h's rule), worked position by position: position 0 (rank
// 4) has child position 4 (rank 2); position 4 has child position 2 (rank 0) (4 + 2 and 4 + 1 are
// outside 5); position 2 has children 1 and 3 (ranks 5 and 1). Tree 1 (5 is odd: position p
// plays p - 1 of tree 0) has its own root at position 1 (rank 5). The root receives nothing,
// and the W - 1 other ranks each receive every channel's slice once: (W - 1) buffers in all.
TEST(TreeStructure, RootedTreesHangTheOtherRanksBelowTheRoot) {
  EXPECT_EQ(RootedTreeLinks(6, 0, 3, 3).parent, -1);
  EXPECT_EQ(Children(RootedTreeLinks(6, 0, 3, 3)), (std::set<int>{4}));
  EXPECT_EQ(Children(RootedTreeLinks(6, 0, 3, 4)), (std::set<int>{2}));
  EXPECT_EQ(Children(RootedTreeLinks(6, 0, 3, 2)), (std::set<int>{0}));
  EXPECT_EQ(Children(RootedTreeLinks(6, 0, 3, 0)), (std::set<int>{5, 1}));
  EXPECT_EQ(RootedTreeLinks(6, 0, 3, 4).parent, 3);
  EXPECT_EQ(RootedTreeLinks(6, 0, 3, 5).parent, 0);
  EXPECT_EQ(Children(RootedTreeLinks(6, 1, 3, 3)), (std::set<int>{5}));
  EXPECT_EQ(RootedTreeLinks(6, 1, 3, 5).parent, 3);
  for (int tree = 0; tree < 2; ++tree) EXPECT_EQ(RootedTreeLinks(6, tree, 3, 3).parent, -1);
  CollectiveSpec spec = Tree(6, 4 * 600, 2, 256);
  spec.op = CollectiveOp::kBroadcast;
  spec.root = 3;
  uint64_t received = 0;
  for (const RankSchedule& rank : BuildSchedule(spec).ranks) {
    for (const Step& step : rank.steps) {
      if (step.kind == StepKind::kRecv) received += step.bytes;
      if (step.kind == StepKind::kRecv) EXPECT_NE(rank.rank, 3);
    }
  }
  EXPECT_EQ(received, 5u * 4 * 600);
}

// Full bandwidth needs complementary trees: with two channels no rank but the root sends more
// than two chunk messages per pair of chunks (a rank inner in both trees would send up to four),
// from every root of W = 2..64.
TEST(TreeStructure, RootedTreesAreComplementary) {
  for (int world = 2; world <= 64; ++world) {
    for (int root : {0, world / 3, world - 1}) {
      for (int rank = 0; rank < world; ++rank) {
        int sends = 0;
        for (int tree = 0; tree < 2; ++tree) {
          const TreeLinks links = RootedTreeLinks(world, tree, root, rank);
          for (int child : links.children) sends += child >= 0;
          EXPECT_EQ(links.parent < 0, rank == root);
        }
        EXPECT_LE(sends, 2) << "W=" << world << " root=" << root << " rank=" << rank;
      }
    }
  }
  EXPECT_EQ(RootedTreeDepth(1, 2), 0);
  EXPECT_EQ(RootedTreeDepth(2, 2), 1);
  EXPECT_EQ(RootedTreeDepth(8, 2), 1 + std::max(TreeDepth(7, 0), TreeDepth(7, 1)));
}

TEST(TreeStructure, OnlyAllReduceBroadcastAndReduceRunOnTheTree) {
  CollectiveSpec spec = Tree(4, 64, 1, 0);
  spec.op = CollectiveOp::kAllGather;
  EXPECT_THROW(BuildSchedule(spec), std::invalid_argument);
  EXPECT_EQ(ToString(Algorithm::kTree), "Tree");
}

}  // namespace
}  // namespace nbox::coll
