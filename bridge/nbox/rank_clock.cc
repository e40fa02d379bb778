#include "bridge/nbox/rank_clock.h"

#include <algorithm>

namespace nbox::bridge::nboxnet {
namespace {

uint64_t Nanoseconds(RankClock::WallClock::duration duration) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

}  // namespace

RankClock::RankClock(wire::ClockMode mode, uint64_t start_vtime, WallClock::time_point start_wall)
    : mode_(mode), base_vtime_(start_vtime), base_wall_(start_wall) {}

uint64_t RankClock::Now(WallClock::time_point wall) const {
  if (blocked_) return base_vtime_;
  return base_vtime_ + Nanoseconds(wall - base_wall_);
}

RankClock::WallClock::time_point RankClock::WallWhen(uint64_t vtime,
                                                     WallClock::time_point wall) const {
  const uint64_t now = Now(wall);
  if (vtime <= now) return wall;
  if (blocked_) return WallClock::time_point::max();
  return wall + std::chrono::nanoseconds(vtime - now);
}

void RankClock::Block(WallClock::time_point wall) {
  if (mode_ != wire::ClockMode::kVirtual || blocked_) return;
  base_vtime_ = Now(wall);
  base_wall_ = wall;
  blocked_ = true;
}

void RankClock::Unblock(WallClock::time_point wall) {
  if (!blocked_) return;
  base_wall_ = wall;
  blocked_ = false;
}

void RankClock::AdvanceTo(uint64_t vtime) {
  if (mode_ != wire::ClockMode::kVirtual || !blocked_) return;
  base_vtime_ = std::max(base_vtime_, vtime);
}

}  // namespace nbox::bridge::nboxnet
