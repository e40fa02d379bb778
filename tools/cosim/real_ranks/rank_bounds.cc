#include "tools/cosim/real_ranks/rank_bounds.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nbox::cosim {

RankBounds::RankBounds(const std::vector<int>& ranks, uint64_t start_ns) {
  for (int rank : ranks) ranks_[rank].clock = ranks_[rank].floor = start_ns;
}

RankBounds::State& RankBounds::At(int rank) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end())
    throw std::logic_error("RankBounds: rank " + std::to_string(rank) + " is not real");
  return it->second;
}

const RankBounds::State& RankBounds::At(int rank) const {
  return const_cast<RankBounds*>(this)->At(rank);
}

void RankBounds::ForgetSeen(State& state) {
  // A delivery at or before the rank's own clock can no longer hold the rank back. One after it
  // may: a realtime rank holds a completion it received until the delivery is due.
  state.unseen.erase(state.unseen.begin(), state.unseen.upper_bound(state.clock));
}

void RankBounds::OnActivity(int rank, uint64_t vtime) {
  State& s = At(rank);
  s.clock = std::max(s.clock, vtime);
  s.floor = std::max(s.floor, vtime);
  s.blocked = false;
  ForgetSeen(s);
}

void RankBounds::OnPromise(int rank, uint64_t vtime, bool blocked, bool saw_every_wakeup) {
  State& s = At(rank);
  s.clock = std::max(s.clock, vtime);
  s.floor = std::max(s.floor, vtime);
  // Made before news reached the rank: the rank may wake at vtime when it arrives.
  s.blocked = blocked && saw_every_wakeup;
  s.blocked_at = s.floor;
  ForgetSeen(s);
}

void RankBounds::OnHeartbeat(int rank, uint64_t vtime, bool clock_running) {
  State& s = At(rank);
  if (s.blocked && clock_running && vtime > s.blocked_at) {
    s.blocked = false;  // its clock runs: the program works again
  }
  s.clock = std::max(s.clock, vtime);
  s.floor = std::max(s.floor, vtime);
  ForgetSeen(s);
}

void RankBounds::OnWakeup(int rank, uint64_t at) {
  State& s = At(rank);
  if (at > s.clock) s.unseen.insert(at);
  if (s.blocked) {
    // Sent after the blocked promise: it wakes the rank at max(t, at), and the rank then acts
    // (posts, or promises again since something happened).
    s.blocked = false;
    s.floor = std::max(s.floor, at);
  }
}

void RankBounds::OnEnded(int rank) {
  At(rank).ended = true;
}

void RankBounds::SetStart(int rank, uint64_t start_ns) {
  State& s = At(rank);
  s.clock = std::max(s.clock, start_ns);
  s.floor = std::max(s.floor, start_ns);
}

uint64_t RankBounds::Bound(int rank) const {
  const State& s = At(rank);
  if (s.ended) return kUnbounded;
  if (!s.blocked) return s.floor;
  return s.unseen.empty() ? kUnbounded : std::max(s.floor, *s.unseen.begin());
}

uint64_t RankBounds::MinBound() const {
  uint64_t lowest = kUnbounded;
  for (const auto& [rank, state] : ranks_) lowest = std::min(lowest, Bound(rank));
  return lowest;
}

bool RankBounds::Waiting(int rank) const {
  const State& s = At(rank);
  return !s.ended && s.blocked && s.unseen.empty();
}

bool RankBounds::Ended(int rank) const {
  return At(rank).ended;
}

}  // namespace nbox::cosim
