// MessageContributions against the ring's closed form (file comment of ring.cc): reduce-scatter
// step s moves s+1 ranks' inputs, all-gather moves W (after a reduce-scatter) or 1 (AllGather),
// and a broadcast moves the root's input alone.
#include "collectives/contributions.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "tests/collectives/collectives_test_util.h"

namespace nbox::coll {
namespace {

using testing::Spec;

// Contributions of rank r's Recv (or Send) steps, in id order.
std::vector<uint32_t> Of(const Schedule& schedule, const std::vector<std::vector<uint32_t>>& all,
                         int rank, StepKind kind) {
  std::vector<uint32_t> out;
  for (const Step& step : schedule.ranks[rank].steps) {
    if (step.kind == kind) out.push_back(all[rank][step.id]);
  }
  return out;
}

TEST(MessageContributions, RingAllReduceCarriesOneMoreInputPerStepThenAll) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 4, 4 * 4 * 8, 1, 0));
  const auto all = MessageContributions(schedule);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Of(schedule, all, r, StepKind::kRecv), (std::vector<uint32_t>{1, 2, 3, 4, 4, 4}))
        << "rank " << r;
    EXPECT_EQ(Of(schedule, all, r, StepKind::kSend), (std::vector<uint32_t>{1, 2, 3, 4, 4, 4}))
        << "rank " << r;
  }
}

TEST(MessageContributions, ChannelsAndChunksKeepTheCountOfTheirRingStep) {
  // 2 channels, 3 chunks per block: every ring step is 6 messages with the same count.
  const int world = 3;
  const Schedule schedule =
      BuildSchedule(Spec(CollectiveOp::kAllReduce, world, 3 * 2 * 3 * 16, 2, 16));
  const auto all = MessageContributions(schedule);
  for (int r = 0; r < world; ++r) {
    std::map<uint32_t, int> reduce_counts, copy_counts;
    for (const Step& step : schedule.ranks[r].steps) {
      if (step.kind != StepKind::kRecv) continue;
      ++(step.reduce ? reduce_counts : copy_counts)[all[r][step.id]];
    }
    EXPECT_EQ(reduce_counts, (std::map<uint32_t, int>{{1, 6}, {2, 6}})) << "rank " << r;
    EXPECT_EQ(copy_counts, (std::map<uint32_t, int>{{3, 12}})) << "rank " << r;
  }
}

TEST(MessageContributions, ReduceScatterEndsOneShortOfTheWorld) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kReduceScatter, 5, 5 * 4 * 2, 1, 0));
  const auto all = MessageContributions(schedule);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(Of(schedule, all, r, StepKind::kRecv), (std::vector<uint32_t>{1, 2, 3, 4}));
  }
}

TEST(MessageContributions, AllGatherAndBroadcastMoveOneRanksInput) {
  const Schedule gather = BuildSchedule(Spec(CollectiveOp::kAllGather, 4, 4 * 4 * 3, 2, 8));
  const auto gathered = MessageContributions(gather);
  CollectiveSpec spec = Spec(CollectiveOp::kBroadcast, 4, 4 * 64, 2, 32);
  spec.root = 2;
  const Schedule broadcast = BuildSchedule(spec);
  const auto broadcasted = MessageContributions(broadcast);
  for (int r = 0; r < 4; ++r) {
    for (const Step& step : gather.ranks[r].steps) EXPECT_EQ(gathered[r][step.id], 1u);
    for (const Step& step : broadcast.ranks[r].steps) EXPECT_EQ(broadcasted[r][step.id], 1u);
  }
}

TEST(MessageContributions, OneRankHasNoMessages) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 1, 64, 1, 0));
  const auto all = MessageContributions(schedule);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].empty());
}

TEST(MessageContributions, ARecvWithoutASendIsRefused) {
  Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllGather, 2, 2 * 4, 1, 0));
  // Drop rank 0's only Send: rank 1's Recv can never be matched.
  auto& steps = schedule.ranks[0].steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == StepKind::kSend) {
      steps.erase(steps.begin() + static_cast<long>(i));
      break;
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].id = static_cast<uint32_t>(i);
    steps[i].deps.clear();
  }
  EXPECT_THROW(MessageContributions(schedule), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::coll
