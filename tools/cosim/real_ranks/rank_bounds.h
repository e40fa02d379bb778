// The conservative clock's bookkeeping: for every real rank, the earliest virtual time at which
// it may still post something (its bound). nbox-cosim advances ns-3 to the lowest bound and no
// further, so a post never lands in the simulator's past (docs/DESIGN.md, "Time").
//
// What moves a rank's bound (all times in ns of virtual time):
// - a post, an op report, a Promise(t) or a Heartbeat(t): the rank's clock is at least t and
//   never goes back, so bound = max(bound, t) (a realtime rank sends heartbeats only while a
//   blocked promise of its stands);
// - Promise(t, blocked): the rank waits for a completion (or a connection, below; nothing
//   else ends a wait in the plugin). Its next post comes at max(t, d) where d is the delivery
//   time of the completion that wakes it. A completion
//   already sent with d > t has not woken it yet (a virtual rank that saw it would have moved
//   its clock to d; a realtime rank holds it until its clock reaches d, which lets the
//   simulator run ahead of the wall clock while the rank waits), so bound = the smallest such
//   d; with none, bound = +infinity until the
//   simulator next completes a request of the rank: that wakes it, bound = max(t, d) until
//   the rank says more. The simulator stops at every completion of a real rank, so it never
//   passes d before the rank answers. A delivery at or before t needs no bound: the plugin
//   makes no blocked promise while it holds a completion already due or a waiter has news it
//   has not acted on (bridge/nbox/wait_state.h);
//   A blocked promise counts only when the rank had seen everything sent to it that could end
//   its wait: every completion, and every connection made for it (the Promise frame carries
//   how many such frames it received, wire::WakesWaiter). One made before the rank received
//   the latest of them says nothing about the wait it ends (the rank may wake at t when it
//   arrives), so it is a plain Promise(t): bound = t, and the rank promises again once it has
//   seen it. A connection made for the rank wakes it like a completion due at the
//   simulator's clock when it was made (OnWakeup): connections take no virtual time, but the
//   rank cannot act on one before it exists;
// - a Heartbeat whose clock runs (it advanced about as fast as the wall clock since the
//   previous one): the program works again (e.g. its application thread computes while the
//   communication thread was blocked). A blocked rank's clock also creeps a little (its wait
//   runs in slices), which is not running;
// - Goodbye (or a rank that left): +infinity.
// A rank that has not joined yet may post from its start time on: bound = its start time.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace nbox::cosim {

class RankBounds {
 public:
  static constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

  // `ranks`: the real ranks; each starts bounded by `start_ns`.
  RankBounds(const std::vector<int>& ranks, uint64_t start_ns);

  // The rank's clock reached `vtime` by acting (a post or an op report).
  void OnActivity(int rank, uint64_t vtime);
  // `saw_every_wakeup`: the rank had received every completion and connection sent to it
  // (else a blocked promise counts as a plain one).
  void OnPromise(int rank, uint64_t vtime, bool blocked, bool saw_every_wakeup = true);
  // `clock_running` (virtual clocks only; false for realtime ranks, whose clock always runs):
  // the rank's clock advanced at least half as fast as the wall clock since its previous
  // heartbeat (the owner measures it), so its program works again.
  void OnHeartbeat(int rank, uint64_t vtime, bool clock_running);
  // The simulator sent `rank` news that can end its wait, due at virtual time `at`: the
  // completion of a request (a send, or a receive's delivery at `at`), or a connection made
  // for it (at the simulator's clock then; the rank cannot use it earlier).
  void OnWakeup(int rank, uint64_t at);
  // The rank ended (Goodbye): it posts nothing more.
  void OnEnded(int rank);
  // Realtime ranks that have not joined: their start is the wall clock, so it moves.
  void SetStart(int rank, uint64_t start_ns);

  uint64_t Bound(int rank) const;
  // The lowest bound over all ranks; kUnbounded when none bounds the simulator.
  uint64_t MinBound() const;
  // The rank waits on the simulator: blocked with no completion on its way.
  bool Waiting(int rank) const;
  bool Ended(int rank) const;

 private:
  struct State {
    uint64_t clock = 0;  // the latest time the rank itself reported (posts, promises, ...)
    uint64_t floor = 0;  // the earliest time of its next post: its clock, or a wake-up after it
    bool blocked = false;
    uint64_t blocked_at = 0;
    bool ended = false;
    std::multiset<uint64_t> unseen;  // wake-ups sent that may not have woken it yet
  };
  State& At(int rank);
  const State& At(int rank) const;
  void ForgetSeen(State& state);

  std::map<int, State> ranks_;
};

}  // namespace nbox::cosim
