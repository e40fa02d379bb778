// SendLanes: the connections a rank sends on, in the order of first use, exactly what reading
// its whole schedule gives (the slow way, written here), for every algorithm, with and without
// servers, with blocks empty and filled.
#include "collectives/send_lanes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace nbox::coll {
namespace {

std::vector<SendLane> FromSchedule(const CollectiveSpec& spec, int rank) {
  std::vector<SendLane> lanes;
  std::set<std::pair<int, int>> seen;
  for (const Step& step : BuildRankSchedule(spec, rank).steps) {
    if (step.kind == StepKind::kSend && seen.insert({step.peer, step.channel}).second) {
      lanes.push_back({step.peer, step.channel});
    }
  }
  return lanes;
}

CollectiveSpec Spec(CollectiveOp op, Algorithm algorithm, int world, int servers_of,
                    uint64_t elements, int channels) {
  CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = algorithm;
  spec.world_size = world;
  spec.ranks_per_server = servers_of;
  spec.element_bytes = 4;
  spec.bytes = elements * 4 *
               (op == CollectiveOp::kAllGather || op == CollectiveOp::kAllToAll
                    ? static_cast<uint64_t>(world)
                    : 1);
  spec.channels = channels;
  spec.chunk_bytes = 4096;
  return spec;
}

TEST(SendLanes, AreTheFirstSendsOfTheScheduleForEveryShape) {
  int checked = 0;
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                          CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll}) {
    for (int servers_of : {0, 4}) {
      for (uint64_t elements : {1ull, 7ull, 16ull, 100ull, 5000ull}) {
        for (int channels : {1, 2, 3}) {
          std::vector<Algorithm> algorithms = {op == CollectiveOp::kAllToAll ? Algorithm::kDirect
                                                                             : Algorithm::kRing};
          if (servers_of > 0 && (op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllToAll)) {
            algorithms.push_back(Algorithm::kHierarchical);
          }
          for (Algorithm algorithm : algorithms) {
            const CollectiveSpec spec = Spec(op, algorithm, 12, servers_of, elements, channels);
            for (int rank = 0; rank < spec.world_size; ++rank) {
              EXPECT_EQ(SendLanes(spec, rank), FromSchedule(spec, rank))
                  << "op " << static_cast<int>(op) << " algorithm " << static_cast<int>(algorithm)
                  << " servers of " << servers_of << " elements " << elements << " channels "
                  << channels << " rank " << rank;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// The cache answers each shape with every rank's lanes as the schedule gives them, once per
// shape: a second communicator of the same shape gets the same table, a different size its
// own, and an all-to-all-v (whose lanes depend on its counts, no part of a shape) is refused.
TEST(SendLanes, TheCacheKeepsEachShapesLanesOfEveryRank) {
  SendLanesCache cache;
  const CollectiveSpec ring = Spec(CollectiveOp::kAllReduce, Algorithm::kRing, 12, 4, 7, 3);
  const auto& first = cache.EveryRank(ring);
  ASSERT_EQ(first.size(), 12u);
  for (int rank = 0; rank < 12; ++rank) EXPECT_EQ(first[rank], FromSchedule(ring, rank));
  EXPECT_EQ(&cache.EveryRank(ring), &first) << "the same shape is built once";
  const CollectiveSpec larger = Spec(CollectiveOp::kAllReduce, Algorithm::kRing, 12, 4, 5000, 3);
  const auto& other = cache.EveryRank(larger);
  EXPECT_NE(&other, &first);
  for (int rank = 0; rank < 12; ++rank) EXPECT_EQ(other[rank], FromSchedule(larger, rank));

  CollectiveSpec skewed = Spec(CollectiveOp::kAllToAllV, Algorithm::kDirect, 4, 0, 1, 2);
  auto counts = std::make_shared<std::vector<uint64_t>>(16, 0);
  (*counts)[0 * 4 + 1] = 8;  // only rank 0 sends, 8 bytes to rank 1
  skewed.counts = counts;
  skewed.bytes = 0;
  EXPECT_THROW(cache.EveryRank(skewed), std::invalid_argument);
}

// SendLaneBound holds for every rank of every algorithm and op it applies to (the ring's and
// the direct algorithms' exactly where every block is filled).
TEST(SendLanes, NeverMoreThanTheirBound) {
  int checked = 0;
  struct Shape {
    CollectiveOp op;
    Algorithm algorithm;
    bool needs_servers;
  };
  const std::vector<Shape> shapes = {
      {CollectiveOp::kAllReduce, Algorithm::kRing, false},
      {CollectiveOp::kAllGather, Algorithm::kRing, false},
      {CollectiveOp::kReduceScatter, Algorithm::kRing, false},
      {CollectiveOp::kBroadcast, Algorithm::kRing, false},
      {CollectiveOp::kReduce, Algorithm::kRing, false},
      {CollectiveOp::kAllReduce, Algorithm::kTree, false},
      {CollectiveOp::kAllReduce, Algorithm::kTree, true},
      {CollectiveOp::kBroadcast, Algorithm::kTree, false},
      {CollectiveOp::kReduce, Algorithm::kTree, false},
      {CollectiveOp::kAllReduce, Algorithm::kHalvingDoubling, false},
      {CollectiveOp::kAllGather, Algorithm::kHalvingDoubling, false},
      {CollectiveOp::kReduceScatter, Algorithm::kHalvingDoubling, false},
      {CollectiveOp::kAllReduce, Algorithm::kDirect, false},
      {CollectiveOp::kAllGather, Algorithm::kDirect, false},
      {CollectiveOp::kReduceScatter, Algorithm::kDirect, false},
      {CollectiveOp::kAllToAll, Algorithm::kDirect, false},
      {CollectiveOp::kAllReduce, Algorithm::kHierarchical, true},
      {CollectiveOp::kAllToAll, Algorithm::kHierarchical, true},
  };
  for (const Shape& shape : shapes) {
    for (int world = 1; world <= 17; ++world) {
      for (int servers_of : {0, 2, 4}) {
        if (shape.needs_servers != (servers_of > 0) || (servers_of > 0 && world % servers_of)) {
          continue;
        }
        for (int channels : {1, 2, 3}) {
          for (uint64_t elements : {1ull, 100ull}) {
            CollectiveSpec spec =
                Spec(shape.op, shape.algorithm, world, servers_of, elements, channels);
            spec.root = world / 2;
            const uint64_t bound = SendLaneBound(spec);
            // A tree's own lanes exactly where every channel's slice holds an element.
            const bool tree_exact =
                shape.algorithm == Algorithm::kTree && elements >= static_cast<uint64_t>(channels);
            size_t most = 0;
            for (int rank = 0; rank < world; ++rank) {
              const size_t lanes = FromSchedule(spec, rank).size();
              most = std::max(most, lanes);
              EXPECT_LE(lanes, SendLaneBound(spec, rank));
              EXPECT_LE(SendLaneBound(spec, rank), bound);
              if (tree_exact) {
                EXPECT_EQ(lanes, SendLaneBound(spec, rank))
                    << ToString(shape.op) << " tree W=" << world << " channels " << channels
                    << " rank " << rank;
              }
              ++checked;
            }
            EXPECT_LE(most, bound) << ToString(shape.op) << " " << ToString(shape.algorithm)
                                   << " W=" << world << " servers of " << servers_of << " channels "
                                   << channels << " elements " << elements;
            const bool power_of_two_halving = shape.algorithm == Algorithm::kHalvingDoubling &&
                                              world > 1 && (world & (world - 1)) == 0;
            const bool exact = shape.algorithm == Algorithm::kRing ||
                               shape.algorithm == Algorithm::kDirect || power_of_two_halving;
            if (exact && elements == 100 && world > 1 && shape.op != CollectiveOp::kBroadcast &&
                shape.op != CollectiveOp::kReduce) {
              EXPECT_EQ(most, bound) << ToString(shape.op) << " " << ToString(shape.algorithm)
                                     << " W=" << world << " channels " << channels;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 3000);
}

// A double binary tree's all-reduce sends once each way along each edge of its channel's tree:
// W - 1 edges, 2 (W - 1) lanes a channel, summed over the ranks (what a memory estimate charges
// a tree's connections; the per-spec bound charges every rank a server head's 8 a channel).
TEST(SendLanes, ATreeAllReduceHasTwoLanesPerEdgeAndChannel) {
  for (int world : {2, 3, 16, 17, 100}) {
    for (int channels : {1, 2, 4}) {
      const CollectiveSpec spec =
          Spec(CollectiveOp::kAllReduce, Algorithm::kTree, world, 0, 1000, channels);
      uint64_t lanes = 0;
      for (int rank = 0; rank < world; ++rank) lanes += SendLaneBound(spec, rank);
      EXPECT_EQ(lanes, 2u * static_cast<uint64_t>(world - 1) * static_cast<uint64_t>(channels))
          << "W=" << world << " channels " << channels;
    }
  }
}

// What a memory estimate charges traffic to: a direct all-to-all's lanes that carry bytes are
// exactly the schedule's (every pair is connected up front, but an all-to-all-v sends nothing
// on its empty pairs, and a pair of fewer elements than channels fills only that many), and
// for every other shape never fewer than the schedule's.
TEST(SendLanes, CarryingLanesAreTheScheduleSendsOfAnAllToAllV) {
  int checked = 0;
  for (int world : {2, 5, 12}) {
    for (int channels : {1, 2, 3}) {
      // Rank r sends (r * 7 + d) % 5 elements to d: some pairs empty, some of 1 or 2 elements.
      auto counts = std::make_shared<std::vector<uint64_t>>(static_cast<size_t>(world * world));
      for (int src = 0; src < world; ++src) {
        for (int dst = 0; dst < world; ++dst) {
          (*counts)[static_cast<size_t>(src * world + dst)] =
              4 * static_cast<uint64_t>((src * 7 + dst) % 5);
        }
      }
      CollectiveSpec spec =
          Spec(CollectiveOp::kAllToAllV, Algorithm::kDirect, world, 0, 0, channels);
      spec.bytes = 0;
      spec.counts = counts;
      for (int rank = 0; rank < world; ++rank) {
        EXPECT_EQ(CarryingLaneBound(spec, rank), FromSchedule(spec, rank).size())
            << "W=" << world << " channels " << channels << " rank " << rank;
        EXPECT_LE(CarryingLaneBound(spec, rank), SendLaneBound(spec));
        ++checked;
      }
      const CollectiveSpec ring =
          Spec(CollectiveOp::kAllReduce, Algorithm::kRing, world, 0, 1, channels);
      for (int rank = 0; rank < world; ++rank) {
        EXPECT_GE(CarryingLaneBound(ring, rank), FromSchedule(ring, rank).size());
      }
    }
  }
  // A rank that sends nothing at all carries on no lane.
  auto empty = std::make_shared<std::vector<uint64_t>>(16, 0);
  (*empty)[1] = 4;  // only rank 0 sends, one element to rank 1
  CollectiveSpec spec = Spec(CollectiveOp::kAllToAllV, Algorithm::kDirect, 4, 0, 0, 2);
  spec.bytes = 0;
  spec.counts = empty;
  EXPECT_EQ(CarryingLaneBound(spec, 0), 1u);
  EXPECT_EQ(CarryingLaneBound(spec, 3), 0u);
  EXPECT_EQ(SendLaneBound(spec), 6u);
  EXPECT_GT(checked, 20);
}

// The fast path's whole point: a ring of 16384 ranks needs its two lanes without building the
// schedule (which would take 2 x 16383 steps per channel).
TEST(SendLanes, ARingOfSixteenThousandRanksSendsToItsNextRankOnEveryChannel) {
  const CollectiveSpec spec =
      Spec(CollectiveOp::kAllReduce, Algorithm::kRing, 16384, 8, uint64_t{1} << 20, 2);
  const auto lanes = SendLanes(spec, 9);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].channel, 0);
  EXPECT_EQ(lanes[1].channel, 1);
}

}  // namespace
}  // namespace nbox::coll
