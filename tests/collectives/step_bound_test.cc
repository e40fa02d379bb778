// ScheduleStepBound: what a run's memory estimate counts per rank, computed without building
// a schedule. It must hold for every rank of every algorithm, and for the
// tree it must not grow with the world.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "collectives/all_to_all.h"
#include "collectives/schedule.h"
#include "collectives/step_source.h"
#include "collectives_test_util.h"

namespace nbox::coll {
namespace {

using testing::Spec;

// The most steps any rank's schedule of `spec` has, built rank by rank.
uint64_t LargestRankSchedule(const CollectiveSpec& spec) {
  uint64_t largest = 0;
  for (int rank = 0; rank < spec.world_size; ++rank) {
    largest = std::max<uint64_t>(largest, BuildRankSchedule(spec, rank).steps.size());
  }
  return largest;
}

TEST(CollectivesStepBound, HoldsForEveryRankOfEveryAlgorithm) {
  const CollectiveOp ops[] = {CollectiveOp::kAllReduce,     CollectiveOp::kAllGather,
                              CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast,
                              CollectiveOp::kReduce,        CollectiveOp::kAllToAll};
  const Algorithm algorithms[] = {Algorithm::kRing, Algorithm::kHierarchical, Algorithm::kDirect,
                                  Algorithm::kHalvingDoubling, Algorithm::kTree};
  int checked = 0;
  for (CollectiveOp op : ops) {
    for (Algorithm algorithm : algorithms) {
      for (int world = 1; world <= 9; ++world) {
        for (int channels : {1, 2, 3}) {
          for (uint64_t chunk : {0, 8, 12}) {
            for (int per_server : {0, 2, 3}) {
              CollectiveSpec spec = Spec(op, world, 4 * 37, channels, chunk);
              spec.algorithm = algorithm;
              spec.ranks_per_server = per_server;
              spec.root = world - 1;
              uint64_t largest = 0;
              try {
                largest = LargestRankSchedule(spec);
              } catch (const std::invalid_argument&) {
                continue;  // not a combination this algorithm runs
              }
              EXPECT_GE(ScheduleStepBound(spec), largest)
                  << ToString(op) << " " << ToString(algorithm) << " W=" << world
                  << " channels=" << channels << " chunk=" << chunk << " servers of " << per_server;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);  // every algorithm ran, not only the ring
}

// Hand count: a 4 MiB all-reduce on two channels in 1 MiB chunks is 2 chunks per channel, and
// channel c runs tree c % 2 of the double binary tree. A rank with two children in one tree
// receives 2 and sends 1 per chunk going up, receives 1 and sends 2 going down (12 steps for its
// 2 chunks), and is a leaf of the other tree, sending 1 and receiving 1 per chunk (4): 16 steps,
// whatever the world. The bound (8 per chunk, chunks counted with one spare per channel: 48) is
// the same at 8 ranks and 16,384, while a ring's grows with the world.
TEST(CollectivesStepBound, TheTreeBoundDoesNotGrowWithTheWorld) {
  CollectiveSpec spec = Spec(CollectiveOp::kAllReduce, 8, 4 << 20, 2, 1 << 20);
  spec.algorithm = Algorithm::kTree;
  EXPECT_EQ(LargestRankSchedule(spec), 16u);
  const uint64_t small_world = ScheduleStepBound(spec);
  EXPECT_EQ(small_world, 48u);
  spec.world_size = 1024;
  EXPECT_EQ(LargestRankSchedule(spec), 16u);
  EXPECT_EQ(ScheduleStepBound(spec), small_world);
  spec.world_size = 16384;
  EXPECT_EQ(ScheduleStepBound(spec), small_world);
  // The ring at 1024 ranks: 2 phases x 1023 blocks x 2 channels x a Send and a Recv.
  spec.algorithm = Algorithm::kRing;
  spec.world_size = 1024;
  spec.chunk_bytes = 0;
  EXPECT_EQ(LargestRankSchedule(spec), 4u * 1023 * 2);
  EXPECT_GE(ScheduleStepBound(spec), 4u * 1023 * 2);
}

// An all-to-all-v's rows differ, so a rank's steps are its own: a Send per chunk of every
// block it sends, a Recv per chunk of every block it receives. Hand count, 3 ranks, 2 channels,
// 8-byte chunks of 4-byte elements: rank 0 sends 20 bytes to rank 1 (5 elements: slices of 3
// and 2, chunks 2 + 1 and 1: 3 Sends) and 4 to rank 2 (1 element, one slice: 1 Send); it
// receives 0 from rank 1 and 16 from rank 2 (4 elements: 2 + 2, 1 + 1: 2 Recvs). 6 steps, while
// rank 1, which only receives rank 0's 20 bytes, has 3. The all-to-all-v has no `bytes`: a
// bound from it alone would count none.
TEST(CollectivesStepBound, AnAllToAllVCountsEachRanksOwnSteps) {
  CollectiveSpec spec = Spec(CollectiveOp::kAllToAllV, 3, 0, 2, 8);
  spec.algorithm = Algorithm::kDirect;
  spec.counts = std::make_shared<const std::vector<uint64_t>>(
      std::vector<uint64_t>{0, 20, 4, 0, 0, 0, 16, 0, 0});
  EXPECT_EQ(AllToAllStepCount(spec, 0), 6u);
  EXPECT_EQ(AllToAllStepCount(spec, 1), 3u);
  EXPECT_EQ(AllToAllStepCount(spec, 2), 1u + 2u);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(HeldStepBound(spec, rank), BuildRankSchedule(spec, rank).steps.size());
  }
}

// The count is the builder's, rank by rank, for seeded rows (zeros among them) on the direct
// and the hierarchical algorithm, whatever the channels, chunks and servers.
TEST(CollectivesStepBound, TheAllToAllCountIsTheBuiltScheduleOfEveryRank) {
  std::mt19937_64 rng(11);
  int checked = 0;
  for (Algorithm algorithm : {Algorithm::kDirect, Algorithm::kHierarchical}) {
    for (int world : {1, 2, 4, 6, 9}) {
      for (int channels : {1, 3}) {
        for (uint64_t chunk : {0, 8, 12}) {
          auto counts = std::make_shared<std::vector<uint64_t>>();
          for (int i = 0; i < world * world; ++i) counts->push_back((rng() % 9) * 4);
          for (bool uniform : {false, true}) {
            CollectiveSpec spec = Spec(uniform ? CollectiveOp::kAllToAll : CollectiveOp::kAllToAllV,
                                       world, uniform ? 4 * 29 : 0, channels, chunk);
            spec.algorithm = algorithm;
            spec.ranks_per_server = algorithm == Algorithm::kHierarchical ? 3 : 0;
            if (!uniform) spec.counts = counts;
            if (algorithm == Algorithm::kHierarchical && world % 3 != 0) continue;
            for (int rank = 0; rank < world; ++rank) {
              EXPECT_EQ(AllToAllStepCount(spec, rank), BuildRankSchedule(spec, rank).steps.size())
                  << ToString(algorithm) << " W=" << world << " rank " << rank;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace nbox::coll
