// Hierarchical all-reduce: it computes the sum on real buffers under random interleavings,
// every rank's bytes inside and across servers match the closed forms of hierarchical.h,
// traffic across servers only joins GPUs of one local index, and bad specs are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/contributions.h"
#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::CheckRun;
using testing::Spec;

CollectiveSpec Hierarchical(int servers, int gpus, int channels, uint64_t bytes, uint64_t chunk = 0,
                            uint32_t element_bytes = 4) {
  CollectiveSpec spec =
      Spec(CollectiveOp::kAllReduce, servers * gpus, bytes, channels, chunk, element_bytes);
  spec.algorithm = Algorithm::kHierarchical;
  spec.ranks_per_server = gpus;
  return spec;
}

template <typename T>
class CollectivesHierarchicalNumeric : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, int32_t>;
TYPED_TEST_SUITE(CollectivesHierarchicalNumeric, ElementTypes);

// Servers 1..4 x GPUs 1..4, 1 or 2 channels, sizes that divide and that do not (down to
// fewer elements than ranks), with and without chunking, several interleavings each.
TYPED_TEST(CollectivesHierarchicalNumeric, MatchesSerialSum) {
  using T = TypeParam;
  int runs = 0;
  for (int servers = 1; servers <= 4; ++servers) {
    for (int gpus = 1; gpus <= 4; ++gpus) {
      for (int channels : {1, 2}) {
        const uint64_t even = 2 * servers * gpus * channels;
        for (uint64_t elements : {uint64_t{3}, even, 3 * even + 5}) {
          for (uint64_t chunk : {uint64_t{0}, 2 * sizeof(T)}) {
            const Schedule schedule = BuildSchedule(
                Hierarchical(servers, gpus, channels, elements * sizeof(T), chunk, sizeof(T)));
            for (uint64_t seed = 0; seed < 3; ++seed) {
              ASSERT_EQ(CheckRun<T>(schedule, seed, elements + servers), "");
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 4 * 4 * 2 * 3 * 2 * 3);
}

// The 2 x 8 shape of the end-to-end tests, deeply pipelined, under many interleavings.
TEST(CollectivesHierarchicalSeeds, TwoServersOfEightManySeeds) {
  const Schedule schedule = BuildSchedule(Hierarchical(2, 8, 2, 16 * 2 * 3 * 8, 8, 8));
  for (uint64_t seed = 0; seed < 60; ++seed) {
    ASSERT_EQ(CheckRun<double>(schedule, seed, seed), "");
  }
}

// With B a multiple of W * channels * element size every cut is exact, so per rank:
//   inside the server: (G-1)/G B in each of phases 1 and 3, in (G-1) S C messages each;
//   across servers: 2 (S-1)/S B/G, in 2 (S-1) C messages, all to GPUs of its own local index.
TEST(CollectivesHierarchical, BytesInsideAndAcrossServersMatchTheClosedForm) {
  for (const auto& [servers, gpus, channels] :
       std::vector<std::tuple<int, int, int>>{{2, 8, 1}, {2, 8, 2}, {3, 4, 2}, {4, 2, 1}}) {
    const uint64_t world = servers * gpus;
    const uint64_t bytes = world * channels * 4 * 10;
    const Schedule schedule = BuildSchedule(Hierarchical(servers, gpus, channels, bytes));
    for (const RankSchedule& rank : schedule.ranks) {
      uint64_t inside = 0, across = 0, inside_messages = 0, across_messages = 0, received = 0;
      for (const Step& step : rank.steps) {
        if (step.kind == StepKind::kRecv) {
          received += step.bytes;
          continue;
        }
        if (step.peer / gpus == rank.rank / gpus) {
          inside += step.bytes;
          ++inside_messages;
        } else {
          EXPECT_EQ(step.peer % gpus, rank.rank % gpus) << "rank " << rank.rank;
          across += step.bytes;
          ++across_messages;
        }
      }
      EXPECT_EQ(inside, 2 * (gpus - 1) * bytes / gpus) << "rank " << rank.rank;
      EXPECT_EQ(across, 2 * (servers - 1) * bytes / (servers * gpus)) << "rank " << rank.rank;
      EXPECT_EQ(received, inside + across);
      EXPECT_EQ(inside_messages, static_cast<uint64_t>(2 * (gpus - 1) * servers * channels));
      EXPECT_EQ(across_messages, static_cast<uint64_t>(2 * (servers - 1) * channels));
    }
  }
}

// Inputs per message, from the algorithm: phase 1 step t carries t+1 GPUs' inputs (a ring
// reduce-scatter), phase 2 reduce-scatter step t carries (t+1) whole servers' sums, i.e.
// G (t+1) inputs, and every later message carries all W.
TEST(CollectivesHierarchical, MessagesCarryTheInputsOfThePhase) {
  const int servers = 3, gpus = 4, world = servers * gpus;
  const Schedule schedule = BuildSchedule(Hierarchical(servers, gpus, 1, world * 4 * 5));
  const auto contributions = MessageContributions(schedule);
  for (const RankSchedule& rank : schedule.ranks) {
    std::vector<uint32_t> expected;
    for (int t = 0; t < gpus - 1; ++t) expected.insert(expected.end(), servers, t + 1);
    for (int t = 0; t < servers - 1; ++t) expected.push_back(gpus * (t + 1));
    for (int t = 0; t < servers - 1; ++t) expected.push_back(world);
    for (int t = 0; t < gpus - 1; ++t) expected.insert(expected.end(), servers, world);
    std::vector<uint32_t> sent;
    for (const Step& step : rank.steps) {
      if (step.kind == StepKind::kSend) sent.push_back(contributions[rank.rank][step.id]);
    }
    EXPECT_EQ(sent, expected) << "rank " << rank.rank;
  }
}

TEST(CollectivesHierarchical, OneServerIsAnNvlinkRingAndOneGpuPerServerARailRing) {
  const Schedule one_server = BuildSchedule(Hierarchical(1, 4, 1, 4 * 4 * 8));
  for (const RankSchedule& rank : one_server.ranks) {
    for (const Step& step : rank.steps) EXPECT_EQ(step.peer / 4, 0);
    EXPECT_EQ(rank.steps.size(), 2u * 2 * 3);  // 2 phases x 3 steps x (send + recv)
  }
  const Schedule one_gpu = BuildSchedule(Hierarchical(4, 1, 1, 4 * 4 * 8));
  for (const RankSchedule& rank : one_gpu.ranks) {
    EXPECT_EQ(rank.steps.size(), 2u * 2 * 3);
  }
}

TEST(CollectivesHierarchical, RefusesSpecsItCannotServe) {
  auto expect = [](CollectiveSpec spec, const std::string& part) {
    try {
      BuildSchedule(spec);
      ADD_FAILURE() << "expected std::invalid_argument mentioning " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(part));
    }
  };
  CollectiveSpec gather = Hierarchical(2, 4, 1, 1024);
  gather.op = CollectiveOp::kAllGather;
  expect(gather,
         "CollectiveSpec.algorithm: Hierarchical is an all-reduce and all-to-all algorithm");
  CollectiveSpec no_servers = Hierarchical(2, 4, 1, 1024);
  no_servers.ranks_per_server = 0;
  expect(no_servers, "CollectiveSpec.ranks_per_server: Hierarchical needs");
  CollectiveSpec uneven = Hierarchical(2, 4, 1, 1024);
  uneven.ranks_per_server = 3;
  expect(uneven, "CollectiveSpec.ranks_per_server: 3 must be 0 (no servers) or divide");
  CollectiveSpec tiny_chunks = Hierarchical(2, 4, 1, 1ull << 30, 4);
  expect(tiny_chunks, "CollectiveSpec.chunk_bytes: 4 is too small");
  EXPECT_EQ(ToString(Algorithm::kHierarchical), "Hierarchical");
}

}  // namespace
}  // namespace nbox::coll
