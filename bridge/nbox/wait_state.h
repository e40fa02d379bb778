// Who waits in the plugin, and what that means for a virtual rank (bridge_client.h,
// UpdateBlockedLocked): whether its clock stands still, and whether it may promise nbox-cosim
// that it posts nothing more until a completion it has not seen yet (a blocked promise).
//
// The clock stands still while a thread waits in waitEvents (and, once the program reports its
// waits, the program waits too), also in the moment between an event and the waiting thread's
// waking: that latency is the scheduler's, not the program's work.
//
// A blocked promise is stricter: a waiter counts only while no event has come since it began
// to wait. Once one has (a completion released, a request failed) that thread is about to wake
// and act (post the next step of its collective) even if the scheduler has not run it yet; a
// blocked promise made in that gap would be false, and the post that follows would land in
// the simulator's past ("broke the clock protocol"; seen with two PyTorch ranks, whose program
// thread declared its wait just after the runtime thread's completion was released).
//
// A blocked promise, once made, stands until something takes it back: a plain promise or an
// action of the rank (a post, an op report), an event that ends a wait, or the program ceasing
// to wait. A waiter whose slice of waitEvents runs out with nothing new is still in the same
// wait (the host runtime tests its requests and waits again), so the moment between two
// slices takes nothing back: a plain promise sent then would hold nbox-cosim at the rank's
// clock until the next slice renewed the blocked one.
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

  // The clock stands still: some thread waits, and the program too once it reports its waits.
  bool StandsStill() const { return !waiters_.empty() && ProgramWaits(); }

  // A blocked promise holds with `events` events so far: some thread waits with nothing new
  // since it began (its count is `events`; counts only grow), and the program waits too.
  bool MayPromiseBlocked(uint64_t events) const {
    return waiters_.count(events) > 0 && ProgramWaits();
  }

  // A blocked promise went out with `events` events so far.
  void PromisedBlocked(uint64_t events) {
    blocked_promise_ = true;
    promised_events_ = events;
  }
  // A plain promise went out, or the rank acted: nbox-cosim no longer holds it blocked.
  void PromiseTakenBack() { blocked_promise_ = false; }
  // The last promise was blocked and nothing has taken it back (a plain promise or an action).
  bool HasBlockedPromise() const { return blocked_promise_; }
  // ... and it still holds with `events` events so far: no event has ended a wait since, and
  // the program (once it reports its waits) still waits. Whether a thread is inside
  // waitEvents at this moment does not matter (the gap between two slices, above).
  bool BlockedPromiseStands(uint64_t events) const {
    return blocked_promise_ && events == promised_events_ && ProgramWaits();
  }

 private:
  bool ProgramWaits() const { return !program_tracking_ || program_waiters_ > 0; }

  std::multiset<uint64_t> waiters_;  // the count each waiting thread read
  bool program_tracking_ = false;    // the program reports its waits
  int program_waiters_ = 0;
  bool blocked_promise_ = false;  // the last promise was blocked, and nothing took it back
  uint64_t promised_events_ = 0;  // the event count when it was made
};

}  // namespace nbox::bridge::nboxnet
