// When the plugin counts a virtual rank as blocked (bridge/nbox/wait_state.h): hand-checked
// sequences of waiters, events and the program's waits.
#include "bridge/nbox/wait_state.h"

#include <gtest/gtest.h>

namespace nbox::bridge::nboxnet {
namespace {

TEST(WaitState, AWaiterBlocksUntilAnEventComes) {
  WaitState waits;
  EXPECT_FALSE(waits.Blocked(5));
  const WaitState::Waiter waiter = waits.Enter(5);
  EXPECT_TRUE(waits.Blocked(5));
  // An event came; the waiter has not woken yet, but it will act: no longer blocked.
  EXPECT_FALSE(waits.Blocked(6));
  waits.Leave(waiter);
  EXPECT_FALSE(waits.Blocked(6));
}

TEST(WaitState, OnceTheProgramReportsWaitsOnlyItsWaitsBlock) {
  WaitState waits;
  waits.ProgramWaiting(false);  // the runtime's declaration at init
  const WaitState::Waiter runtime = waits.Enter(3);
  EXPECT_FALSE(waits.Blocked(3)) << "the runtime thread waits while the program computes";
  waits.ProgramWaiting(true);
  EXPECT_TRUE(waits.Blocked(3));
  // The race this guards against: the runtime's completion was released (event 4) just
  // before the program declared its wait; the runtime thread is about to post its next step.
  EXPECT_FALSE(waits.Blocked(4));
  waits.Leave(runtime);
  const WaitState::Waiter again = waits.Enter(4);
  EXPECT_TRUE(waits.Blocked(4));
  waits.ProgramWaiting(false);
  EXPECT_FALSE(waits.Blocked(4));
  waits.Leave(again);
}

TEST(WaitState, ProgramWaitsNestAndAStaleWaiterDoesNotHideACurrentOne) {
  WaitState waits;
  waits.ProgramWaiting(true);
  waits.ProgramWaiting(true);
  const WaitState::Waiter old_waiter = waits.Enter(7);
  const WaitState::Waiter new_waiter = waits.Enter(7);
  waits.Leave(old_waiter);
  EXPECT_TRUE(waits.Blocked(7));
  waits.ProgramWaiting(false);
  EXPECT_TRUE(waits.Blocked(7)) << "one of two nested program waits is still on";
  waits.ProgramWaiting(false);
  EXPECT_FALSE(waits.Blocked(7));
  waits.ProgramWaiting(false);  // an extra end is ignored, not negative
  waits.ProgramWaiting(true);
  EXPECT_TRUE(waits.Blocked(7));
  waits.Leave(new_waiter);
  EXPECT_FALSE(waits.Blocked(7));
}

}  // namespace
}  // namespace nbox::bridge::nboxnet
