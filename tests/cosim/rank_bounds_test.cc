// The conservative clock's bookkeeping (rank_bounds.h), by hand-worked sequences of frames: the
// bound must never exceed a time at which the rank may still post, and must not hold the
// simulator back once the rank waits on it.
#include "tools/cosim/real_ranks/rank_bounds.h"

#include <gtest/gtest.h>

namespace nbox::cosim {
namespace {

constexpr uint64_t kInf = RankBounds::kUnbounded;

TEST(RankBounds, AnUnjoinedRankHoldsTheSimulatorAtItsStart) {
  RankBounds bounds({0, 3}, 0);
  EXPECT_EQ(bounds.Bound(0), 0u);
  EXPECT_EQ(bounds.MinBound(), 0u);
  bounds.SetStart(3, 500);
  EXPECT_EQ(bounds.Bound(3), 500u);
  EXPECT_EQ(bounds.MinBound(), 0u);  // rank 0 still at 0
  EXPECT_THROW(bounds.Bound(1), std::logic_error);
}

TEST(RankBounds, PostsPromisesAndHeartbeatsRaiseTheBoundAndNeverLowerIt) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  EXPECT_EQ(bounds.Bound(0), 100u);
  bounds.OnPromise(0, 250, false);
  EXPECT_EQ(bounds.Bound(0), 250u);
  bounds.OnHeartbeat(0, 200, true);  // older news: the clock never goes back
  EXPECT_EQ(bounds.Bound(0), 250u);
  bounds.OnActivity(0, 240);
  EXPECT_EQ(bounds.Bound(0), 250u);
  EXPECT_FALSE(bounds.Waiting(0));
}

TEST(RankBounds, ABlockedRankIsUnboundedUntilACompletionWakesIt) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  bounds.OnPromise(0, 120, true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  EXPECT_TRUE(bounds.Waiting(0));
  // A heartbeat at the same time: still blocked.
  bounds.OnHeartbeat(0, 120, false);
  EXPECT_EQ(bounds.Bound(0), kInf);
  // The simulator completes a request at 900: the rank wakes at max(120, 900).
  bounds.OnWakeup(0, 900);
  EXPECT_EQ(bounds.Bound(0), 900u);
  EXPECT_FALSE(bounds.Waiting(0));
  // A completion before its blocked time wakes it at the promise's time.
  bounds.OnPromise(0, 1000, true);
  bounds.OnWakeup(0, 950);
  EXPECT_EQ(bounds.Bound(0), 1000u);
}

TEST(RankBounds, ACompletionLaterThanABlockedPromiseCannotHaveBeenSeen) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  bounds.OnWakeup(0, 400);  // sent while the rank was running, delivery ahead of its clock
  bounds.OnWakeup(0, 300);
  bounds.OnPromise(0, 150, true);    // the rank blocks before its clock reached them
  EXPECT_EQ(bounds.Bound(0), 300u);  // it wakes at the earliest
  EXPECT_FALSE(bounds.Waiting(0));
  // Once the rank's clock passed them they no longer hold it back.
  bounds.OnPromise(0, 500, true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  EXPECT_TRUE(bounds.Waiting(0));
}

TEST(RankBounds, ABlockedPromiseMadeBeforeACompletionArrivedIsAPlainPromise) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  bounds.OnWakeup(0, 120);  // sent while the rank ran; it blocks before receiving it
  bounds.OnPromise(0, 150, true, /*saw_every_wakeup=*/false);
  // The completion (120 <= 150) wakes it at 150 when it arrives: the simulator waits there.
  EXPECT_EQ(bounds.Bound(0), 150u);
  EXPECT_FALSE(bounds.Waiting(0));
  // Having received it, the rank blocks again and says so: now it waits on the simulator.
  bounds.OnPromise(0, 150, true, /*saw_every_wakeup=*/true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  EXPECT_TRUE(bounds.Waiting(0));
}

TEST(RankBounds, AStaleBlockedPromiseHoldsAtItsTimeEvenWhenTheCompletionIsLater) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  bounds.OnWakeup(0, 400);
  bounds.OnPromise(0, 150, true, /*saw_every_wakeup=*/false);
  EXPECT_EQ(bounds.Bound(0), 150u);  // a plain promise of 150, not the 400 a wait would give
  // Seen, it is held until the rank's clock reaches 400, which then wakes it.
  bounds.OnPromise(0, 160, true, /*saw_every_wakeup=*/true);
  EXPECT_EQ(bounds.Bound(0), 400u);
  EXPECT_FALSE(bounds.Waiting(0));
  // A completion sent after a blocked promise that saw everything wakes the rank at its time.
  bounds.OnActivity(0, 450);
  bounds.OnPromise(0, 500, true, true);
  bounds.OnWakeup(0, 700);
  EXPECT_EQ(bounds.Bound(0), 700u);
}

// A realtime rank receives a completion before it is due and holds it: its clock (the wall
// clock) is still before the delivery when it waits again, and the held completion wakes it.
TEST(RankBounds, AWaitingRankIsHeldAtACompletionItReceivedButHasNotReached) {
  RankBounds bounds({0}, 0);
  bounds.OnActivity(0, 100);
  bounds.OnPromise(0, 120, true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  bounds.OnWakeup(0, 900);  // computed ahead of the rank's clock
  EXPECT_EQ(bounds.Bound(0), 900u);
  // Received at the rank's clock 300, held until 900; the rank still waits and says so.
  bounds.OnPromise(0, 300, true, /*saw_every_wakeup=*/true);
  EXPECT_EQ(bounds.Bound(0), 900u);
  EXPECT_FALSE(bounds.Waiting(0));
  bounds.OnHeartbeat(0, 600, /*clock_running=*/false);
  EXPECT_EQ(bounds.Bound(0), 900u);
  // Released at 900, it wakes the rank, which posts and waits again.
  bounds.OnActivity(0, 910);
  EXPECT_EQ(bounds.Bound(0), 910u);
  bounds.OnPromise(0, 920, true, true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  EXPECT_TRUE(bounds.Waiting(0));
}

TEST(RankBounds, AHeartbeatWithARunningClockMeansTheRankWorksAgain) {
  RankBounds bounds({0}, 0);
  bounds.OnPromise(0, 150, true);
  bounds.OnHeartbeat(0, 151, /*clock_running=*/false);  // a blocked clock creeping
  EXPECT_EQ(bounds.Bound(0), kInf);
  bounds.OnHeartbeat(0, 180, /*clock_running=*/true);
  EXPECT_EQ(bounds.Bound(0), 180u);
  EXPECT_FALSE(bounds.Waiting(0));
}

// A rank blocked waiting for a connection that another rank makes later in virtual time (the
// simulator ran on meanwhile): it wakes at the simulator's clock when the connection was made,
// not at its own blocked time, which the simulator has passed.
TEST(RankBounds, AConnectionWakesTheRankAtTheTimeItWasMade) {
  RankBounds bounds({0}, 0);
  bounds.OnPromise(0, 150, true);
  EXPECT_EQ(bounds.Bound(0), kInf);
  bounds.OnWakeup(0, 400);
  EXPECT_EQ(bounds.Bound(0), 400u);
  EXPECT_FALSE(bounds.Waiting(0));
  // One made at its own clock (the simulator held there) resumes it where it stood.
  bounds.OnActivity(0, 500);
  bounds.OnPromise(0, 520, true);
  bounds.OnWakeup(0, 520);
  EXPECT_EQ(bounds.Bound(0), 520u);
}

TEST(RankBounds, TheLowestRankBoundsTheSimulatorAndEndedRanksDoNot) {
  RankBounds bounds({0, 2, 5}, 0);
  bounds.OnActivity(0, 700);
  bounds.OnActivity(2, 300);
  bounds.OnPromise(5, 900, true);
  EXPECT_EQ(bounds.MinBound(), 300u);
  bounds.OnEnded(2);
  EXPECT_EQ(bounds.MinBound(), 700u);
  EXPECT_TRUE(bounds.Ended(2));
  bounds.OnEnded(0);
  EXPECT_EQ(bounds.MinBound(), kInf);  // only a waiting rank left
}

}  // namespace
}  // namespace nbox::cosim
