// Runs one rank's schedule as a state machine, whatever moves the bytes.
//
// The engine asks for ready steps, starts them, and reports completions. A Send completes
// when its message has been delivered; a Recv when its message has arrived (and been reduced).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

class StepTracker {
 public:
  explicit StepTracker(const RankSchedule& schedule);

  // Steps whose dependencies are all complete and that have not been handed out yet,
  // in ascending id order. Each step is returned exactly once.
  std::vector<uint32_t> TakeReady();
  void Complete(uint32_t step_id);
  bool Done() const { return completed_ == schedule_->steps.size(); }
  const RankSchedule& schedule() const { return *schedule_; }

 private:
  const RankSchedule* schedule_;
  std::vector<uint32_t> missing_deps_;          // per step
  std::vector<std::vector<uint32_t>> waiters_;  // per step: steps that depend on it
  std::vector<uint32_t> ready_;
  std::vector<bool> done_;
  size_t completed_ = 0;
};

}  // namespace nbox::coll
