// Ring broadcast: a hand-derived small case, closed-form traffic, the chain's shape, spec
// checks, and numeric runs on the reference executor against the root's own input.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/reference_executor.h"
#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::PartSize;
using testing::Spec;

CollectiveSpec Broadcast(int world, uint64_t bytes, int root, int channels = 1,
                         uint64_t chunk_bytes = 0) {
  return testing::RootedSpec(CollectiveOp::kBroadcast, Algorithm::kRing, world, bytes, root,
                             channels, chunk_bytes);
}

struct Expected {
  StepKind kind;
  int peer;
  uint64_t offset;
  uint64_t bytes;
  std::vector<uint32_t> deps;
};

void ExpectSteps(const RankSchedule& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.steps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const Step& step = got.steps[i];
    EXPECT_EQ(step.id, i);
    EXPECT_EQ(step.kind, want[i].kind);
    EXPECT_EQ(step.peer, want[i].peer);
    EXPECT_EQ(step.channel, 0);
    EXPECT_EQ(step.offset, want[i].offset);
    EXPECT_EQ(step.bytes, want[i].bytes);
    EXPECT_FALSE(step.reduce);
    EXPECT_EQ(step.deps, want[i].deps);
  }
}

constexpr StepKind kS = StepKind::kSend;
constexpr StepKind kR = StepKind::kRecv;

// Worked by hand: W = 3, root 1, 12 bytes in 4-byte chunks. The chain is 1 -> 2 -> 0.
//   rank 1 (root): send chunks 0, 1, 2 to rank 2, nothing to wait for;
//   rank 2: receive each chunk from 1, then forward it to 0 once it has arrived;
//   rank 0 (end of the chain): receive each chunk from 2.
TEST(CollectivesBroadcast, ThreeRanksRootOneByHand) {
  const Schedule schedule = BuildSchedule(Broadcast(3, 12, 1, 1, 4));
  ExpectSteps(schedule.ranks[1], {{kS, 2, 0, 4, {}}, {kS, 2, 4, 4, {}}, {kS, 2, 8, 4, {}}});
  ExpectSteps(schedule.ranks[2], {{kR, 1, 0, 4, {}},
                                  {kS, 0, 0, 4, {0}},
                                  {kR, 1, 4, 4, {}},
                                  {kS, 0, 4, 4, {2}},
                                  {kR, 1, 8, 4, {}},
                                  {kS, 0, 8, 4, {4}}});
  ExpectSteps(schedule.ranks[0], {{kR, 2, 0, 4, {}}, {kR, 2, 4, 4, {}}, {kR, 2, 8, 4, {}}});
  for (const RankSchedule& rank : schedule.ranks) EXPECT_EQ(rank.buffer_bytes, 12u);
}

// Every rank but the root receives the whole buffer once; every rank but the root's
// predecessor sends it once; chunks of a channel number ceil(slice / chunk).
TEST(CollectivesBroadcast, TrafficAndStepCountsInClosedForm) {
  for (int world = 2; world <= 7; ++world) {
    for (int root : {0, world / 2, world - 1}) {
      for (int channels : {1, 3}) {
        for (uint64_t chunk : {uint64_t{0}, uint64_t{8}, uint64_t{20}}) {
          const uint64_t bytes = 4 * 37;
          const Schedule schedule = BuildSchedule(Broadcast(world, bytes, root, channels, chunk));
          uint64_t chunks = 0;
          for (int c = 0; c < channels; ++c) {
            const uint64_t slice = PartSize(37, channels, c);
            chunks += chunk == 0 ? 1 : (slice + chunk / 4 - 1) / (chunk / 4);
          }
          const int last = (root + world - 1) % world;
          for (const RankSchedule& rank : schedule.ranks) {
            SCOPED_TRACE("W=" + std::to_string(world) + " root=" + std::to_string(root) +
                         " rank=" + std::to_string(rank.rank));
            uint64_t sent = 0, received = 0, sends = 0, recvs = 0;
            for (const Step& step : rank.steps) {
              if (step.kind == kS) {
                sent += step.bytes;
                ++sends;
                EXPECT_EQ(step.peer, (rank.rank + 1) % world);
              } else {
                received += step.bytes;
                ++recvs;
                EXPECT_EQ(step.peer, (rank.rank + world - 1) % world);
              }
            }
            EXPECT_EQ(received, rank.rank == root ? 0 : bytes);
            EXPECT_EQ(recvs, rank.rank == root ? 0 : chunks);
            EXPECT_EQ(sent, rank.rank == last ? 0 : bytes);
            EXPECT_EQ(sends, rank.rank == last ? 0 : chunks);
          }
        }
      }
    }
  }
}

TEST(CollectivesBroadcast, OneRankOrNoBytesMovesNothing) {
  EXPECT_TRUE(BuildRankSchedule(Broadcast(1, 64, 0), 0).steps.empty());
  for (const RankSchedule& rank : BuildSchedule(Broadcast(4, 0, 2)).ranks) {
    EXPECT_TRUE(rank.steps.empty());
  }
}

TEST(CollectivesBroadcast, SpecChecksAndNames) {
  EXPECT_EQ(ToString(CollectiveOp::kBroadcast), "Broadcast");
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kBroadcast, 8), 1.0);
  try {
    BuildSchedule(Broadcast(4, 64, 4));
    FAIL() << "root 4 of 4 ranks was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()), "CollectiveSpec.root: 4 is not in 0..3");
  }
  EXPECT_THROW(BuildSchedule(Broadcast(4, 64, -1)), std::invalid_argument);
  // Too many chunks is refused before building anything.
  EXPECT_THROW(BuildSchedule(Broadcast(2, uint64_t{4} << 26, 0, 1, 4)), std::invalid_argument);
  // The root is a broadcast-only field: other ops ignore it.
  CollectiveSpec all_reduce = Spec(CollectiveOp::kAllReduce, 2, 64, 1, 0);
  all_reduce.root = 9;
  EXPECT_NO_THROW(BuildSchedule(all_reduce));
}

// After the run every rank holds the root's input; the other ranks start with a value no
// input has, so an element that was never delivered shows.
TEST(CollectivesBroadcast, EveryRankEndsWithTheRootsData) {
  int runs = 0;
  for (int world = 1; world <= 8; ++world) {
    for (int root = 0; root < world; root += (world > 4 ? 3 : 1)) {
      for (int channels : {1, 2, 3}) {
        for (uint64_t chunk : {uint64_t{0}, uint64_t{4}, uint64_t{12}, uint64_t{100}}) {
          for (uint64_t elements : {uint64_t{1}, uint64_t{7}, uint64_t{64}, uint64_t{131}}) {
            const Schedule schedule =
                BuildSchedule(Broadcast(world, 4 * elements, root, channels, chunk));
            for (uint64_t seed : {1, 2}) {
              ASSERT_EQ(testing::CheckBroadcastRun(schedule, seed), "") << "elements=" << elements;
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 500);
}

}  // namespace
}  // namespace nbox::coll
