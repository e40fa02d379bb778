// Reduce, on the ring's chain and on the two rooted trees: hand-derived small cases, the bytes
// every rank sends and receives in closed form, contributions per message, spec checks, and
// numeric runs on the reference executor against the serial sum at the root.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/contributions.h"
#include "collectives/schedule.h"
#include "collectives/traffic.h"
#include "collectives/tree.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::PartSize;

CollectiveSpec Reduce(Algorithm algorithm, int world, uint64_t bytes, int root, int channels = 1,
                      uint64_t chunk_bytes = 0) {
  return testing::RootedSpec(CollectiveOp::kReduce, algorithm, world, bytes, root, channels,
                             chunk_bytes);
}

struct Expected {
  StepKind kind;
  int peer;
  uint64_t offset;
  bool reduce;
  std::vector<uint32_t> deps;
};

void ExpectSteps(const RankSchedule& got, uint64_t chunk, const std::vector<Expected>& want) {
  ASSERT_EQ(got.steps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("rank " + std::to_string(got.rank) + " step " + std::to_string(i));
    const Step& step = got.steps[i];
    EXPECT_EQ(step.kind, want[i].kind);
    EXPECT_EQ(step.peer, want[i].peer);
    EXPECT_EQ(step.offset, want[i].offset);
    EXPECT_EQ(step.bytes, chunk);
    EXPECT_EQ(step.reduce, want[i].reduce);
    EXPECT_EQ(step.deps, want[i].deps);
  }
}

constexpr StepKind kS = StepKind::kSend;
constexpr StepKind kR = StepKind::kRecv;

// Worked by hand: W = 4, root 2, 8 bytes in 4-byte chunks. The chain is 3 -> 0 -> 1 -> 2
// (NCCL's: the root's successor starts, the root ends).
//   rank 3: sends chunks 0 and 1 to rank 0 straight away;
//   ranks 0 and 1: receive each chunk from their predecessor adding it to their own, then
//     send the sum on once it has arrived;
//   rank 2 (root): receives each chunk from 1, adding it.
TEST(CollectivesReduce, RingChainOfFourRootTwoByHand) {
  const Schedule schedule = BuildSchedule(Reduce(Algorithm::kRing, 4, 8, 2, 1, 4));
  ExpectSteps(schedule.ranks[3], 4, {{kS, 0, 0, false, {}}, {kS, 0, 4, false, {}}});
  for (int rank : {0, 1}) {
    const int prev = (rank + 3) % 4;
    ExpectSteps(schedule.ranks[rank], 4,
                {{kR, prev, 0, true, {}},
                 {kS, rank + 1, 0, false, {0}},
                 {kR, prev, 4, true, {}},
                 {kS, rank + 1, 4, false, {2}}});
  }
  ExpectSteps(schedule.ranks[2], 4, {{kR, 1, 0, true, {}}, {kR, 1, 4, true, {}}});
}

// Worked by hand: W = 5, root 0, one channel, so tree 0 (tree.h): ranks 1..4 are positions
// 0..3 of the 4-rank tree 0 -> 2, 2 -> {1, 3}, hung below the root: 0 -> 1 -> 3 -> {2, 4}. A
// chunk goes up only: ranks 2 and 4 send theirs to 3, which adds both to its own and sends the
// sum to 1, which adds its own and sends to 0, which adds it.
TEST(CollectivesReduce, TreeOfFiveByHand) {
  const Schedule schedule = BuildSchedule(Reduce(Algorithm::kTree, 5, 4, 0));
  ExpectSteps(schedule.ranks[2], 4, {{kS, 3, 0, false, {}}});
  ExpectSteps(schedule.ranks[4], 4, {{kS, 3, 0, false, {}}});
  ExpectSteps(schedule.ranks[3], 4,
              {{kR, 2, 0, true, {}}, {kR, 4, 0, true, {0}}, {kS, 1, 0, false, {1}}});
  ExpectSteps(schedule.ranks[1], 4, {{kR, 3, 0, true, {}}, {kS, 0, 0, false, {0}}});
  ExpectSteps(schedule.ranks[0], 4, {{kR, 1, 0, true, {}}});
}

// Every rank but the root sends the whole buffer once (its channel slices, each once, to the
// next rank of the chain or to its parent); the root sends nothing. What is received sums to
// (W - 1) S: on the chain every rank but the root's successor receives S; on a tree a rank
// receives a slice from each of its children.
TEST(CollectivesReduce, BytesEveryRankSendsAndReceivesInClosedForm) {
  const uint64_t bytes = 4 * 101;
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree}) {
    for (int world = 2; world <= 9; ++world) {
      for (int root : {0, world / 2, world - 1}) {
        for (int channels : {1, 2, 3}) {
          SCOPED_TRACE(std::string(ToString(algorithm)) + " W=" + std::to_string(world) +
                       " root=" + std::to_string(root) + " channels=" + std::to_string(channels));
          const CollectiveSpec spec = Reduce(algorithm, world, bytes, root, channels, 40);
          const Schedule schedule = BuildSchedule(spec);
          uint64_t received_total = 0;
          for (int rank = 0; rank < world; ++rank) {
            uint64_t sent = 0;
            uint64_t received = 0;
            uint64_t expected_received = 0;
            for (const Step& step : schedule.ranks[rank].steps) {
              (step.kind == kS ? sent : received) += step.bytes;
            }
            for (int channel = 0; channel < channels; ++channel) {
              const uint64_t slice = 4 * PartSize(bytes / 4, channels, channel);
              if (algorithm == Algorithm::kRing) {
                if (rank != (root + 1) % world) expected_received += slice;
              } else {
                for (int child : RootedTreeLinks(world, channel % 2, root, rank).children) {
                  if (child >= 0) expected_received += slice;
                }
              }
            }
            EXPECT_EQ(sent, rank == root ? 0 : bytes) << "rank " << rank;
            EXPECT_EQ(received, expected_received) << "rank " << rank;
            received_total += received;
          }
          EXPECT_EQ(received_total, (world - 1) * bytes);
        }
      }
    }
  }
}

// The number of ranks whose inputs a message carries: on the chain, the k-th rank of the
// chain (k = 1 for the root's successor) sends k; on a tree, a rank sends its subtree's size.
// Either way the root's receives add up to W - 1 per chunk.
TEST(CollectivesReduce, MessagesCarryTheirSubtree) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree}) {
    for (int world : {2, 5, 8}) {
      const int root = world - 1;
      const CollectiveSpec spec = Reduce(algorithm, world, 4 * 64, root, 2, 32);
      const Schedule schedule = BuildSchedule(spec);
      const auto contributions = MessageContributions(schedule);
      uint64_t at_root = 0;
      for (const Step& step : schedule.ranks[root].steps) {
        ASSERT_EQ(step.kind, kR);
        at_root += contributions[root][step.id];
      }
      // 2 channels x 4 chunks of 32 bytes (128 bytes a channel).
      EXPECT_EQ(at_root, 8u * (world - 1)) << ToString(algorithm) << " W=" << world;
      if (algorithm != Algorithm::kRing) continue;
      for (int rank = 0; rank < world; ++rank) {
        const int position = (rank - root - 1 + 2 * world) % world + 1;  // 1 .. W
        for (const Step& step : schedule.ranks[rank].steps) {
          if (step.kind == kS) EXPECT_EQ(contributions[rank][step.id], position);
        }
      }
    }
  }
}

TEST(CollectivesReduce, NumericallyCorrectUnderRandomInterleavings) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree}) {
    for (int world = 1; world <= 9; ++world) {
      for (int root = 0; root < world; ++root) {
        for (int channels : {1, 2, 3}) {
          for (uint64_t chunk : {uint64_t{0}, uint64_t{12}}) {
            for (uint64_t elements : {uint64_t{1}, uint64_t{7}, uint64_t{50}}) {
              const Schedule schedule =
                  BuildSchedule(Reduce(algorithm, world, 4 * elements, root, channels, chunk));
              for (uint64_t seed : {1, 2, 3}) {
                ASSERT_EQ(testing::CheckRun<int32_t>(schedule, seed), "");
                ASSERT_EQ(testing::CheckRun<float>(schedule, seed), "");
              }
            }
          }
        }
      }
    }
  }
}

// The lanes the analytical model is fed are the schedules' Sends, summed per lane.
TEST(CollectivesReduce, LanesAreTheSchedulesSends) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree}) {
    const CollectiveSpec spec = Reduce(algorithm, 7, 4 * 999, 3, 3, 400);
    const Schedule schedule = BuildSchedule(spec);
    std::vector<uint64_t> from_schedule(7 * 7 * 3, 0);
    for (const RankSchedule& rank : schedule.ranks) {
      for (const Step& step : rank.steps) {
        if (step.kind == kS)
          from_schedule[(rank.rank * 7 + step.peer) * 3 + step.channel] += step.bytes;
      }
    }
    std::vector<uint64_t> from_lanes(7 * 7 * 3, 0);
    ForEachLane(spec, [&](const LaneTraffic& lane) {
      from_lanes[(lane.src * 7 + lane.dst) * 3 + lane.channel] += lane.bytes;
    });
    EXPECT_EQ(from_lanes, from_schedule) << ToString(algorithm);
  }
  EXPECT_EQ(CriticalPathOf(Reduce(Algorithm::kRing, 7, 4 * 999, 3, 3, 400)).steps,
            std::vector<int>{6});
  // The 7 ranks below the root: tree 0 of 7 is 0 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5}
  // (tree.h), depth 3, and tree 1 its shift; one more hop up to the root.
  EXPECT_EQ(CriticalPathOf(Reduce(Algorithm::kTree, 8, 4 * 999, 0, 2, 400)).steps,
            std::vector<int>{4});
}

TEST(CollectivesReduce, SpecChecks) {
  EXPECT_EQ(ToString(CollectiveOp::kReduce), "Reduce");
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kReduce, 8), 1.0);
  for (int root : {-1, 4}) {
    try {
      BuildSchedule(Reduce(Algorithm::kRing, 4, 16, root));
      ADD_FAILURE() << "root " << root << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("CollectiveSpec.root"), std::string::npos) << e.what();
    }
  }
  for (Algorithm algorithm :
       {Algorithm::kDirect, Algorithm::kHalvingDoubling, Algorithm::kHierarchical}) {
    CollectiveSpec spec = Reduce(algorithm, 4, 16, 0);
    spec.ranks_per_server = 2;
    EXPECT_THROW(ValidateSpec(spec), std::invalid_argument) << ToString(algorithm);
  }
}

}  // namespace
}  // namespace nbox::coll
