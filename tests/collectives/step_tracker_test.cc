// StepTracker on a small DAG worked by hand.
#include "collectives/step_tracker.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace nbox::coll {
namespace {

Step MakeStep(uint32_t id, StepKind kind, int peer, int channel, std::vector<uint32_t> deps) {
  Step step;
  step.id = id;
  step.kind = kind;
  step.peer = peer;
  step.channel = channel;
  step.bytes = 4;
  step.deps = std::move(deps);
  return step;
}

// Rank 0:
//   0 Recv from 1 ch 0
//   1 Send to 1 ch 0   after 0
//   2 Send to 1 ch 0   (no deps, but behind step 1 on the same connection)
//   3 Send to 2 ch 0   (no deps, another connection)
//   4 Recv from 1 ch 0 after 1 and 3
//   5 Send to 1 ch 1   after 4
RankSchedule HandDag() {
  RankSchedule schedule;
  schedule.rank = 0;
  schedule.buffer_bytes = 4;
  schedule.steps = {
      MakeStep(0, StepKind::kRecv, 1, 0, {}),     MakeStep(1, StepKind::kSend, 1, 0, {0}),
      MakeStep(2, StepKind::kSend, 1, 0, {}),     MakeStep(3, StepKind::kSend, 2, 0, {}),
      MakeStep(4, StepKind::kRecv, 1, 0, {1, 3}), MakeStep(5, StepKind::kSend, 1, 1, {4})};
  return schedule;
}

using Ids = std::vector<uint32_t>;

TEST(CollectivesStepTracker, HandsOutStepsAsTheirDependenciesComplete) {
  const RankSchedule schedule = HandDag();
  StepTracker tracker(schedule);
  EXPECT_FALSE(tracker.Done());
  EXPECT_EQ(tracker.TakeReady(), (Ids{0, 3}));  // 2 waits for 1 on connection (1, 0)
  EXPECT_EQ(tracker.TakeReady(), Ids{});        // each step only once
  tracker.Complete(3);
  EXPECT_EQ(tracker.TakeReady(), Ids{});  // 4 still needs 1
  tracker.Complete(0);
  EXPECT_EQ(tracker.TakeReady(), (Ids{1, 2}));  // 1 released, and 2 right behind it
  tracker.Complete(2);                          // completions may come in any order
  EXPECT_EQ(tracker.TakeReady(), Ids{});
  tracker.Complete(1);
  EXPECT_EQ(tracker.TakeReady(), Ids{4});
  EXPECT_EQ(tracker.completed(), 4u);
  tracker.Complete(4);
  EXPECT_EQ(tracker.TakeReady(), Ids{5});
  EXPECT_FALSE(tracker.Done());
  tracker.Complete(5);
  EXPECT_TRUE(tracker.Done());
  EXPECT_EQ(tracker.TakeReady(), Ids{});
}

TEST(CollectivesStepTracker, LaterSendWaitsForEarlierSendOfItsConnectionOnly) {
  // 0 Send to 1 ch 0 after 2; 1 Send to 1 ch 0 (free); 2 Recv from 1 ch 0; 3 Send to 1 ch 1.
  RankSchedule schedule;
  schedule.steps = {MakeStep(0, StepKind::kSend, 1, 0, {2}), MakeStep(1, StepKind::kSend, 1, 0, {}),
                    MakeStep(2, StepKind::kRecv, 1, 0, {}), MakeStep(3, StepKind::kSend, 1, 1, {})};
  StepTracker tracker(schedule);
  EXPECT_EQ(tracker.TakeReady(), (Ids{2, 3}));
  tracker.Complete(3);
  EXPECT_EQ(tracker.TakeReady(), Ids{});
  tracker.Complete(2);
  EXPECT_EQ(tracker.TakeReady(), (Ids{0, 1}));
}

TEST(CollectivesStepTracker, MatchesArrivalsToRecvsInIdOrder) {
  const RankSchedule schedule = HandDag();
  StepTracker tracker(schedule);
  EXPECT_TRUE(tracker.ExpectsArrival(1, 0));
  EXPECT_FALSE(tracker.ExpectsArrival(2, 0));
  EXPECT_EQ(tracker.MatchArrival(1, 0), 0u);
  EXPECT_TRUE(tracker.ExpectsArrival(1, 0));
  EXPECT_EQ(tracker.MatchArrival(1, 0), 4u);
  EXPECT_FALSE(tracker.ExpectsArrival(1, 0));
  EXPECT_THROW(tracker.MatchArrival(1, 0), std::logic_error);
  EXPECT_THROW(tracker.MatchArrival(2, 0), std::logic_error);  // only a Send goes there
  EXPECT_THROW(tracker.MatchArrival(1, 1), std::logic_error);
}

TEST(CollectivesStepTracker, RejectsMisuse) {
  const RankSchedule schedule = HandDag();
  StepTracker tracker(schedule);
  EXPECT_THROW(tracker.Complete(1), std::logic_error);  // not handed out yet
  EXPECT_THROW(tracker.Complete(6), std::logic_error);  // no such step
  tracker.TakeReady();
  tracker.Complete(0);
  EXPECT_THROW(tracker.Complete(0), std::logic_error);  // twice

  RankSchedule bad = HandDag();
  bad.steps[1].deps = {7};
  EXPECT_THROW(StepTracker{bad}, std::invalid_argument);
  bad.steps[1].deps = {1};
  EXPECT_THROW(StepTracker{bad}, std::invalid_argument);
  bad = HandDag();
  bad.steps[2].id = 5;
  EXPECT_THROW(StepTracker{bad}, std::invalid_argument);
}

TEST(CollectivesStepTracker, EmptyScheduleIsDone) {
  const RankSchedule empty;
  StepTracker tracker(empty);
  EXPECT_TRUE(tracker.Done());
  EXPECT_EQ(tracker.TakeReady(), Ids{});
}

}  // namespace
}  // namespace nbox::coll
