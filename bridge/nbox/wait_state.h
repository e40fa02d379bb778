// Who waits in the plugin, and whether that makes a virtual rank blocked: the rank's clock
// stands still and the plugin may promise nbox-cosim that it posts nothing more until a
// completion it has not seen yet (bridge_client.h, UpdateBlockedLocked).
//
// A thread waiting in waitEvents counts only while no event has come since it began to wait:
// once one has (a completion released, a request failed), that thread is about to wake and
// act (post the next step of its collective), even if the scheduler has not run it yet. A
// blocked promise made in that gap would be false, and the post that follows would land in
// the simulator's past ("broke the clock protocol"; seen with two PyTorch ranks, whose program
// thread declared its wait just after the runtime thread's completion was released).
//
// Not thread-safe: the client guards it with its mutex.
#pragma once

#include <cstdint>
#include <set>

namespace nbox::bridge::nboxnet {

class WaitState {
 public:
  using Waiter = std::multiset<uint64_t>::iterator;

  // A thread starts waiting for an event after `seen` events (the count it read).
  Waiter Enter(uint64_t seen) { return waiters_.insert(seen); }
  void Leave(Waiter waiter) { waiters_.erase(waiter); }

  // nboxNetExt_v2.programWaiting: from the first call on, only the program's waits count.
  void ProgramWaiting(bool waiting) {
    program_tracking_ = true;
    if (waiting) {
      ++program_waiters_;
    } else if (program_waiters_ > 0) {
      --program_waiters_;
    }
  }

  // Blocked with `events` events so far: some thread waits with nothing new since it began
  // (its count is `events`; counts only grow), and the program waits too once it reports it.
  bool Blocked(uint64_t events) const {
    const bool waiting = waiters_.count(events) > 0;
    return waiting && (!program_tracking_ || program_waiters_ > 0);
  }

 private:
  std::multiset<uint64_t> waiters_;  // the count each waiting thread read
  bool program_tracking_ = false;    // the program reports its waits
  int program_waiters_ = 0;
};

}  // namespace nbox::bridge::nboxnet
