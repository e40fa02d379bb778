// Runs one rank's schedule as a state machine, whatever moves the bytes.
//
// The engine asks for ready steps, starts them, and reports completions. A Send completes
// when its message has been delivered; a Recv when its message has arrived (and been reduced).
// Every call is O(1) amortized per step plus sorting the batch TakeReady returns, so an
// engine may call it per message.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

class StepTracker {
 public:
  // Keeps a reference to `schedule`, which must outlive the tracker. Throws
  // std::invalid_argument if a dependency names a step that does not exist or the step itself.
  explicit StepTracker(const RankSchedule& schedule);
  explicit StepTracker(RankSchedule&&) = delete;  // would dangle

  // Steps whose dependencies are all complete and that have not been handed out yet,
  // in ascending id order. Each step is returned exactly once. A Send is held back until
  // every lower-id Send to the same (peer, channel) has been handed out, so an engine that
  // starts steps in the order returned posts each connection's messages in id order, as the
  // matching rule requires. (That is an order of starting, not of completing: messages of a
  // connection stay pipelined.)
  std::vector<uint32_t> TakeReady();

  // Reports that a handed-out step finished. Throws std::logic_error if the step was not
  // handed out or was already completed.
  void Complete(uint32_t step_id);

  // The matching rule from the receiving side: the Recv step that the next message arriving
  // from `peer` on `channel` belongs to. Each call consumes one. Throws std::logic_error if
  // this rank expects no further message from there.
  uint32_t MatchArrival(int peer, int channel);
  // Whether a further message from `peer` on `channel` belongs to this schedule. An engine
  // running several collectives in order on one communicator hands an arrival to the first
  // tracker that still expects one from there.
  bool ExpectsArrival(int peer, int channel) const;

  bool Done() const { return completed_ == schedule_->steps.size(); }
  size_t completed() const { return completed_; }
  const RankSchedule& schedule() const { return *schedule_; }

 private:
  enum class State : uint8_t {
    kWaiting,  // dependencies missing
    kHeld,     // a Send with its dependencies met, behind an earlier Send of its connection
    kReady,    // in ready_
    kTaken,    // handed out by TakeReady
    kCompleted,
  };

  // Sends to, or Recvs from, one (peer, channel), in id order.
  struct Lane {
    std::vector<uint32_t> steps;
    size_t next = 0;  // Sends: first not yet released to ready_; Recvs: first not yet matched
  };

  void OnDependenciesMet(uint32_t step_id);
  void ReleaseSends(Lane& lane);

  const RankSchedule* schedule_;
  std::vector<uint32_t> missing_deps_;  // per step
  std::vector<uint32_t> waiter_begin_;  // per step and one past: range in waiters_
  std::vector<uint32_t> waiters_;       // steps that depend on each step, grouped by step
  std::vector<uint32_t> ready_;
  std::vector<State> state_;
  std::vector<uint32_t> lane_of_;  // per step: index into send_lanes_ or recv_lanes_
  std::vector<Lane> send_lanes_;
  std::vector<Lane> recv_lanes_;
  std::map<std::pair<int, int>, uint32_t> recv_lane_index_;  // (peer, channel) -> lane
  size_t completed_ = 0;
};

}  // namespace nbox::coll
