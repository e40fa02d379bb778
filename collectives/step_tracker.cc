#include "collectives/step_tracker.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nbox::coll {
namespace {

std::string Describe(const RankSchedule& schedule, uint32_t step_id) {
  return "rank " + std::to_string(schedule.rank) + " step " + std::to_string(step_id);
}

}  // namespace

StepTracker::StepTracker(const RankSchedule& schedule)
    : schedule_(&schedule),
      missing_deps_(schedule.steps.size(), 0),
      waiter_begin_(schedule.steps.size() + 1, 0),
      state_(schedule.steps.size(), State::kWaiting),
      lane_of_(schedule.steps.size(), 0) {
  const auto step_count = static_cast<uint32_t>(schedule.steps.size());
  for (uint32_t id = 0; id < step_count; ++id) {
    const Step& step = schedule.steps[id];
    if (step.id != id) {
      throw std::invalid_argument(Describe(schedule, id) + " carries id " +
                                  std::to_string(step.id));
    }
    for (uint32_t dep : step.deps) {
      if (dep >= step_count || dep == id) {
        throw std::invalid_argument(Describe(schedule, id) + " depends on step " +
                                    std::to_string(dep) + ", which is " +
                                    (dep == id ? "itself" : "not in the schedule"));
      }
      ++waiter_begin_[dep + 1];
    }
    missing_deps_[id] = static_cast<uint32_t>(step.deps.size());
  }
  // Counting sort of the reverse edges: waiters of step d are waiters_[begin[d], begin[d+1]).
  for (uint32_t id = 0; id < step_count; ++id) waiter_begin_[id + 1] += waiter_begin_[id];
  waiters_.resize(waiter_begin_[step_count]);
  std::vector<uint32_t> fill(waiter_begin_.begin(), waiter_begin_.end() - 1);
  for (const Step& step : schedule.steps) {
    for (uint32_t dep : step.deps) waiters_[fill[dep]++] = step.id;
  }

  // Lanes in id order; the Send lanes need no lookup by (peer, channel) afterwards.
  std::map<std::pair<int, int>, uint32_t> send_lane_index;
  for (const Step& step : schedule.steps) {
    const bool send = step.kind == StepKind::kSend;
    auto& index = send ? send_lane_index : recv_lane_index_;
    auto& lanes = send ? send_lanes_ : recv_lanes_;
    const auto [it, added] =
        index.emplace(std::make_pair(step.peer, step.channel), static_cast<uint32_t>(lanes.size()));
    if (added) lanes.emplace_back();
    lanes[it->second].steps.push_back(step.id);
    lane_of_[step.id] = it->second;
  }

  for (uint32_t id = 0; id < step_count; ++id) {
    if (missing_deps_[id] == 0) OnDependenciesMet(id);
  }
}

void StepTracker::OnDependenciesMet(uint32_t step_id) {
  if (schedule_->steps[step_id].kind == StepKind::kRecv) {
    state_[step_id] = State::kReady;
    ready_.push_back(step_id);
    return;
  }
  state_[step_id] = State::kHeld;
  ReleaseSends(send_lanes_[lane_of_[step_id]]);
}

void StepTracker::ReleaseSends(Lane& lane) {
  while (lane.next < lane.steps.size() && state_[lane.steps[lane.next]] == State::kHeld) {
    const uint32_t id = lane.steps[lane.next++];
    state_[id] = State::kReady;
    ready_.push_back(id);
  }
}

std::vector<uint32_t> StepTracker::TakeReady() {
  std::vector<uint32_t> taken;
  taken.swap(ready_);
  std::sort(taken.begin(), taken.end());
  for (uint32_t id : taken) state_[id] = State::kTaken;
  return taken;
}

void StepTracker::Complete(uint32_t step_id) {
  if (step_id >= state_.size() || state_[step_id] != State::kTaken) {
    throw std::logic_error("StepTracker::Complete: " + Describe(*schedule_, step_id) +
                           (step_id >= state_.size() ? " does not exist"
                            : state_[step_id] == State::kCompleted
                                ? " was already completed"
                                : " was not handed out by TakeReady"));
  }
  state_[step_id] = State::kCompleted;
  ++completed_;
  for (uint32_t i = waiter_begin_[step_id]; i < waiter_begin_[step_id + 1]; ++i) {
    const uint32_t waiter = waiters_[i];
    if (--missing_deps_[waiter] == 0) OnDependenciesMet(waiter);
  }
}

bool StepTracker::ExpectsArrival(int peer, int channel) const {
  const auto it = recv_lane_index_.find({peer, channel});
  if (it == recv_lane_index_.end()) return false;
  const Lane& lane = recv_lanes_[it->second];
  return lane.next < lane.steps.size();
}

uint32_t StepTracker::MatchArrival(int peer, int channel) {
  if (!ExpectsArrival(peer, channel)) {
    throw std::logic_error("StepTracker::MatchArrival: rank " + std::to_string(schedule_->rank) +
                           " expects no further message from rank " + std::to_string(peer) +
                           " on channel " + std::to_string(channel));
  }
  Lane& lane = recv_lanes_[recv_lane_index_.at({peer, channel})];
  return lane.steps[lane.next++];
}

}  // namespace nbox::coll
