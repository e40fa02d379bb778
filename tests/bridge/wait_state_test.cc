// When a virtual rank's clock stands still and when it may promise blocked
// (bridge/nbox/wait_state.h): hand-checked sequences of waiters, events and the program's waits.
#include "bridge/nbox/wait_state.h"

#include <gtest/gtest.h>

namespace nbox::bridge::nboxnet {
namespace {

TEST(WaitState, AWaiterMayPromiseUntilAnEventComesButTheClockStandsUntilItWakes) {
  WaitState waits;
  EXPECT_FALSE(waits.StandsStill());
  EXPECT_FALSE(waits.MayPromiseBlocked(5));
  const WaitState::Waiter waiter = waits.Enter(5);
  EXPECT_TRUE(waits.StandsStill());
  EXPECT_TRUE(waits.MayPromiseBlocked(5));
  // An event came; the waiter has not woken yet, but it will act: no promise now, while the
  // clock still stands through the scheduler's wake-up latency.
  EXPECT_FALSE(waits.MayPromiseBlocked(6));
  EXPECT_TRUE(waits.StandsStill());
  waits.Leave(waiter);
  EXPECT_FALSE(waits.StandsStill());
  EXPECT_FALSE(waits.MayPromiseBlocked(6));
}

TEST(WaitState, OnceTheProgramReportsWaitsOnlyItsWaitsCount) {
  WaitState waits;
  waits.ProgramWaiting(false);  // the runtime's declaration at init
  const WaitState::Waiter runtime = waits.Enter(3);
  EXPECT_FALSE(waits.StandsStill()) << "the runtime thread waits while the program computes";
  EXPECT_FALSE(waits.MayPromiseBlocked(3));
  waits.ProgramWaiting(true);
  EXPECT_TRUE(waits.StandsStill());
  EXPECT_TRUE(waits.MayPromiseBlocked(3));
  // The race this guards against: the runtime's completion was released (event 4) just
  // before the program declared its wait; the runtime thread is about to post its next step.
  EXPECT_FALSE(waits.MayPromiseBlocked(4));
  waits.Leave(runtime);
  const WaitState::Waiter again = waits.Enter(4);
  EXPECT_TRUE(waits.MayPromiseBlocked(4));
  waits.ProgramWaiting(false);
  EXPECT_FALSE(waits.StandsStill());
  EXPECT_FALSE(waits.MayPromiseBlocked(4));
  waits.Leave(again);
}

TEST(WaitState, ProgramWaitsNestAndAStaleWaiterDoesNotHideACurrentOne) {
  WaitState waits;
  waits.ProgramWaiting(true);
  waits.ProgramWaiting(true);
  const WaitState::Waiter old_waiter = waits.Enter(7);
  const WaitState::Waiter new_waiter = waits.Enter(7);
  waits.Leave(old_waiter);
  EXPECT_TRUE(waits.MayPromiseBlocked(7));
  waits.ProgramWaiting(false);
  EXPECT_TRUE(waits.MayPromiseBlocked(7)) << "one of two nested program waits is still on";
  waits.ProgramWaiting(false);
  EXPECT_FALSE(waits.StandsStill());
  EXPECT_FALSE(waits.MayPromiseBlocked(7));
  waits.ProgramWaiting(false);  // an extra end is ignored, not negative
  waits.ProgramWaiting(true);
  EXPECT_TRUE(waits.MayPromiseBlocked(7));
  waits.Leave(new_waiter);
  EXPECT_FALSE(waits.StandsStill());
}

// A blocked promise stands across the moment between two slices of a wait (no thread inside
// waitEvents, nothing new), and falls to an event, a plain promise or action, or the program
// ceasing to wait.
TEST(WaitState, ABlockedPromiseStandsBetweenSlicesUntilAnEventOrAnAction) {
  WaitState waits;
  EXPECT_FALSE(waits.BlockedPromiseStands(2));
  WaitState::Waiter slice = waits.Enter(2);
  waits.PromisedBlocked(2);
  EXPECT_TRUE(waits.BlockedPromiseStands(2));
  waits.Leave(slice);  // the slice ran out with nothing new
  EXPECT_FALSE(waits.StandsStill());
  EXPECT_TRUE(waits.BlockedPromiseStands(2)) << "the gap between two slices took it back";
  slice = waits.Enter(2);
  EXPECT_TRUE(waits.BlockedPromiseStands(2));
  EXPECT_FALSE(waits.BlockedPromiseStands(3)) << "an event ends the wait it was made in";
  waits.Leave(slice);

  waits.PromisedBlocked(3);
  waits.PromiseTakenBack();  // a post, an op report or a plain promise
  EXPECT_FALSE(waits.HasBlockedPromise());
  EXPECT_FALSE(waits.BlockedPromiseStands(3));

  waits.ProgramWaiting(true);
  waits.PromisedBlocked(3);
  EXPECT_TRUE(waits.BlockedPromiseStands(3));
  waits.ProgramWaiting(false);
  EXPECT_FALSE(waits.BlockedPromiseStands(3)) << "the program works again";
  EXPECT_TRUE(waits.HasBlockedPromise());
}

}  // namespace
}  // namespace nbox::bridge::nboxnet
