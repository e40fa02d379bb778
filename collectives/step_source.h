// Where a StepTracker takes one rank's schedule from: in id order, a batch at a time.
//
// A whole schedule is one batch. A ring's is one ring step at a time (ring_step_source.h), so a
// rank running it holds the steps in flight and not the 4 (W - 1) x channels x chunks of the
// whole ring: memory stays linear in ranks when every rank of a large world runs one at once
// (docs/DESIGN.md, "Resource limits").
//
// The contract that lets StepTracker take the next batch only when it is needed (when a step of
// the last batch it took completes, or a message arrives for a receive it has not seen yet):
//   - ids continue densely from batch to batch, and every dependency is an earlier step;
//   - every Send of a batch after the first depends on a step of the batch just before it
//     (so it cannot become ready before a step of that batch completes). Receives may depend
//     on any earlier step or on none: when they become ready matters only once their message
//     is there, and the tracker takes batches up to a receive by the time its message arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

class StepSource {
 public:
  virtual ~StepSource() = default;

  virtual int rank() const = 0;
  // Appends the next batch (at least one step) to `steps` and returns true, or returns false
  // when the schedule has no more steps.
  virtual bool NextBatch(std::vector<Step>& steps) = 0;
  // Every step whose id is below `first_live` has completed: later batches may leave their
  // dependencies on such steps out (the tracker would ignore them), and the source may forget
  // what it kept to name them.
  virtual void Retire(uint32_t first_live) { (void)first_live; }
};

// A materialised schedule, as one batch.
class WholeScheduleSource : public StepSource {
 public:
  explicit WholeScheduleSource(RankSchedule schedule) : schedule_(std::move(schedule)) {}

  int rank() const override { return schedule_.rank; }
  bool NextBatch(std::vector<Step>& steps) override {
    if (taken_ || schedule_.steps.empty()) return false;
    taken_ = true;
    steps.insert(steps.end(), std::make_move_iterator(schedule_.steps.begin()),
                 std::make_move_iterator(schedule_.steps.end()));
    schedule_.steps.clear();
    return true;
  }

 private:
  RankSchedule schedule_;
  bool taken_ = false;
};

// The steps BuildRankSchedule(spec, rank) would build, as a source: a ring (all-reduce,
// all-gather, reduce-scatter) one ring step at a time, any other schedule whole. Throws what
// BuildRankSchedule throws.
std::unique_ptr<StepSource> BuildRankStepSource(const CollectiveSpec& spec, int rank);

// About the most steps a StepTracker on BuildRankStepSource(spec, rank) holds at once, for a
// memory estimate: an all-to-all's own count of the rank's steps (AllToAllStepCount: an
// all-to-all-v's rows differ), any other whole schedule's ScheduleStepBound, a ring's three
// ring steps (two were measured with every rank of a world in step,
// tests/collectives/step_tracker_test.cc; a rank that starts late holds more, the messages that
// came early). `spec` must be valid.
uint64_t HeldStepBound(const CollectiveSpec& spec, int rank);

}  // namespace nbox::coll
