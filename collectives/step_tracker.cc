#include "collectives/step_tracker.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nbox::coll {
namespace {

std::string Describe(int rank, uint32_t step_id) {
  return "rank " + std::to_string(rank) + " step " + std::to_string(step_id);
}

}  // namespace

StepTracker::StepTracker(std::unique_ptr<StepSource> source) : source_(std::move(source)) {
  TakeBatch();
}

StepTracker::StepTracker(const RankSchedule& schedule)
    : StepTracker(std::make_unique<WholeScheduleSource>(schedule)) {}

bool StepTracker::TakeBatch() {
  if (exhausted_) return false;
  batch_.clear();
  if (!source_->NextBatch(batch_)) {
    exhausted_ = true;
    return false;
  }
  const auto first = static_cast<uint32_t>(base_ + window_.size());
  const auto end = static_cast<uint32_t>(first + batch_.size());
  for (uint32_t i = 0; i < batch_.size(); ++i) {
    const Step& step = batch_[i];
    if (step.id != first + i) {
      throw std::invalid_argument(Describe(rank(), first + i) + " carries id " +
                                  std::to_string(step.id));
    }
    for (uint32_t dep : step.deps) {
      if (dep >= end || dep == step.id) {
        throw std::invalid_argument(Describe(rank(), step.id) + " depends on step " +
                                    std::to_string(dep) + ", which is " +
                                    (dep == step.id ? "itself" : "not in the schedule"));
      }
    }
  }
  last_batch_begin_ = first;
  for (Step& step : batch_) {
    Entry& entry = window_.push_back_slot();  // a recycled entry: its waiters are cleared
    entry.step = std::move(step);
    entry.state = State::kWaiting;
    entry.missing = 0;
    const bool send = entry.step.kind == StepKind::kSend;
    entry.lane = LaneOf(send, entry.step.peer, entry.step.channel);
    (send ? send_lanes_ : recv_lanes_)[entry.lane].steps.push_back_slot() = entry.step.id;
  }
  // Dependencies in this batch may point forward within it, so count them once all are in.
  for (uint32_t id = first; id < end; ++id) {
    Entry& entry = At(id);
    for (uint32_t dep : entry.step.deps) {
      if (IsComplete(dep)) continue;
      ++entry.missing;
      At(dep).waiters.push_back(id);
    }
  }
  for (uint32_t id = first; id < end; ++id) {
    if (At(id).missing == 0) OnDependenciesMet(id);
  }
  return true;
}

bool StepTracker::IsComplete(uint32_t step_id) const {
  return step_id < base_ || At(step_id).state == State::kCompleted;
}

void StepTracker::OnDependenciesMet(uint32_t step_id) {
  Entry& entry = At(step_id);
  if (entry.step.kind == StepKind::kRecv) {
    entry.state = State::kReady;
    ready_.push_back(step_id);
    return;
  }
  entry.state = State::kHeld;
  ReleaseSends(send_lanes_[entry.lane]);
}

void StepTracker::ReleaseSends(Lane& lane) {
  while (!lane.steps.empty() && At(lane.steps.front()).state == State::kHeld) {
    const uint32_t id = lane.steps.front();
    lane.steps.pop_front();
    At(id).state = State::kReady;
    ready_.push_back(id);
  }
}

std::vector<uint32_t> StepTracker::TakeReady() {
  std::vector<uint32_t> taken;
  TakeReady(taken);
  return taken;
}

void StepTracker::TakeReady(std::vector<uint32_t>& taken) {
  taken.clear();
  taken.swap(ready_);
  std::sort(taken.begin(), taken.end());
  for (uint32_t id : taken) At(id).state = State::kTaken;
}

void StepTracker::Complete(uint32_t step_id) {
  const bool held = step_id >= base_ && step_id - base_ < window_.size();
  if (!held || At(step_id).state != State::kTaken) {
    throw std::logic_error("StepTracker::Complete: " + Describe(rank(), step_id) +
                           (step_id < base_ || (held && At(step_id).state == State::kCompleted)
                                ? " was already completed"
                            : !held ? " does not exist"
                                    : " was not handed out by TakeReady"));
  }
  Entry& entry = At(step_id);
  entry.state = State::kCompleted;
  ++completed_;
  for (uint32_t waiter : entry.waiters) {
    if (--At(waiter).missing == 0) OnDependenciesMet(waiter);
  }
  entry.waiters.clear();
  // The next batch's Sends wait on this batch's steps (step_source.h): take it now, so that
  // they count this step as complete.
  if (step_id >= last_batch_begin_) TakeBatch();
  const uint32_t base_before = base_;
  while (!window_.empty() && window_.front().state == State::kCompleted) {
    window_.pop_front();
    ++base_;
  }
  if (base_ != base_before) source_->Retire(base_);
}

uint32_t StepTracker::LaneOf(bool send, int peer, int channel) {
  LaneMemo& last = send ? last_send_lane_ : last_recv_lane_;
  if (last.Holds(peer, channel)) return last.lane;
  auto& index = send ? send_lane_index_ : recv_lane_index_;
  auto& lanes = send ? send_lanes_ : recv_lanes_;
  // try_emplace: no map node is built when the lane exists, as it does after the first batch.
  const auto [it, added] =
      index.try_emplace(std::make_pair(peer, channel), static_cast<uint32_t>(lanes.size()));
  if (added) lanes.emplace_back();
  last = {peer, channel, it->second};
  return it->second;
}

StepTracker::Lane* StepTracker::RecvLane(int peer, int channel) {
  while (true) {
    uint32_t lane = kNoLane;
    if (last_recv_lane_.Holds(peer, channel)) {
      lane = last_recv_lane_.lane;
    } else if (const auto it = recv_lane_index_.find({peer, channel});
               it != recv_lane_index_.end()) {
      lane = it->second;
    }
    if (lane != kNoLane && !recv_lanes_[lane].steps.empty()) return &recv_lanes_[lane];
    if (!TakeBatch()) return nullptr;
  }
}

bool StepTracker::ExpectsArrival(int peer, int channel) {
  return RecvLane(peer, channel) != nullptr;
}

uint32_t StepTracker::MatchArrival(int peer, int channel) {
  Lane* lane = RecvLane(peer, channel);
  if (lane == nullptr) {
    throw std::logic_error("StepTracker::MatchArrival: rank " + std::to_string(rank()) +
                           " expects no further message from rank " + std::to_string(peer) +
                           " on channel " + std::to_string(channel));
  }
  const uint32_t id = lane->steps.front();
  lane->steps.pop_front();
  return id;
}

const Step& StepTracker::step(uint32_t step_id) const {
  if (step_id < base_ || step_id - base_ >= window_.size()) {
    throw std::logic_error("StepTracker::step: " + Describe(rank(), step_id) + " is not held (" +
                           std::to_string(base_) + " .. " + std::to_string(base_ + window_.size()) +
                           " are)");
  }
  return At(step_id).step;
}

bool StepTracker::IsHandedOut(uint32_t step_id) const {
  return step_id >= base_ && step_id - base_ < window_.size() && At(step_id).state == State::kTaken;
}

}  // namespace nbox::coll
