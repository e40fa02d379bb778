// A real rank's virtual clock (docs/DESIGN.md, "Time"), in nanoseconds of simulated time.
//
// - realtime: the wall clock since the session opened, plus the start time the server gave.
// - virtual: the same while the rank works, but the clock stands still while the rank is
//   blocked waiting on the simulator (Block/Unblock around the blocking wait), and may then
//   jump forward to the delivery time of what it was waiting for (AdvanceTo).
//
// Not thread-safe: the plugin's client guards it with its mutex.
#pragma once

#include <chrono>
#include <cstdint>

#include "bridge/wire/messages.h"

namespace nbox::bridge::nboxnet {

class RankClock {
 public:
  using WallClock = std::chrono::steady_clock;

  RankClock(wire::ClockMode mode, uint64_t start_vtime, WallClock::time_point start_wall);

  uint64_t Now(WallClock::time_point wall) const;
  // The wall time at which Now() reaches `vtime` if the clock keeps running (now, if it already
  // has). While blocked in virtual mode the clock does not run: WallClock::time_point::max().
  WallClock::time_point WallWhen(uint64_t vtime, WallClock::time_point wall) const;

  // Virtual mode only (no effect in realtime mode).
  void Block(WallClock::time_point wall);
  void Unblock(WallClock::time_point wall);
  void AdvanceTo(uint64_t vtime);  // never backwards
  bool blocked() const { return blocked_; }

  wire::ClockMode mode() const { return mode_; }

 private:
  wire::ClockMode mode_;
  uint64_t base_vtime_;  // the clock's reading at base_wall_
  WallClock::time_point base_wall_;
  bool blocked_ = false;
};

}  // namespace nbox::bridge::nboxnet
