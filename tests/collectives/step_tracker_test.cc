// StepTracker on a small DAG worked by hand.
#include "collectives/step_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <set>
#include <stdexcept>
#include <vector>

#include "collectives/step_source.h"

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

// Every rank of a ring all-reduce run by a network that delivers messages one at a time in
// the order they were sent: each tracker ends Done, and holds at most a few ring steps of its
// schedule at any time, however many ranks there are.
struct LockstepRun {
  size_t most_held = 0;  // over ranks and time
  size_t steps = 0;      // completed, over ranks
  bool all_done = true;
};

LockstepRun RunRingInLockstep(const CollectiveSpec& spec) {
  const int world = spec.world_size;
  std::vector<StepTracker> trackers;
  for (int r = 0; r < world; ++r) trackers.emplace_back(BuildRankStepSource(spec, r));
  std::vector<std::set<uint32_t>> early(static_cast<size_t>(world));
  struct Message {
    int src;
    int dst;
    int channel;
    uint32_t send;
  };
  std::deque<Message> wire;
  LockstepRun run;
  auto advance = [&](int r) {
    StepTracker& t = trackers[static_cast<size_t>(r)];
    for (auto ready = t.TakeReady(); !ready.empty(); ready = t.TakeReady()) {
      for (uint32_t id : ready) {
        const Step& step = t.step(id);
        if (step.kind == StepKind::kSend) {
          wire.push_back({r, step.peer, step.channel, id});
        } else if (early[static_cast<size_t>(r)].erase(id) > 0) {
          t.Complete(id);
        }
      }
    }
    run.most_held = std::max(run.most_held, t.held());
  };
  for (int r = 0; r < world; ++r) advance(r);
  while (!wire.empty()) {
    const Message m = wire.front();
    wire.pop_front();
    StepTracker& receiver = trackers[static_cast<size_t>(m.dst)];
    const uint32_t recv = receiver.MatchArrival(m.src, m.channel);
    if (receiver.IsHandedOut(recv)) {
      receiver.Complete(recv);
    } else {
      early[static_cast<size_t>(m.dst)].insert(recv);
    }
    run.most_held = std::max(run.most_held, receiver.held());
    trackers[static_cast<size_t>(m.src)].Complete(m.send);
    advance(m.dst);
    advance(m.src);
  }
  for (const StepTracker& t : trackers) {
    run.all_done = run.all_done && t.Done();
    run.steps += t.completed();
  }
  return run;
}

TEST(CollectivesStepTracker, ARingHoldsTheRingStepsInFlightNotTheWholeRing) {
  for (const int world : {8, 64, 256}) {
    CollectiveSpec spec;
    spec.op = CollectiveOp::kAllReduce;
    spec.world_size = world;
    spec.channels = 2;
    spec.bytes = uint64_t{4} * world * 2 * 3;  // 3 elements per block
    spec.chunk_bytes = 4;                      // 3 chunks per block: 12 steps per ring step
    const LockstepRun run = RunRingInLockstep(spec);
    EXPECT_TRUE(run.all_done) << "W=" << world;
    EXPECT_EQ(run.steps, static_cast<size_t>(world) * 2 * (world - 1) * 12) << "W=" << world;
    // The whole ring is 2 (W - 1) ring steps of 12; held: at most three ring steps.
    EXPECT_LE(run.most_held, 3u * 12) << "W=" << world;
    std::cout << "W=" << world << ": at most " << run.most_held << " steps held\n";
  }
}

}  // namespace
}  // namespace nbox::coll
