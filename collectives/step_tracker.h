// Runs one rank's schedule as a state machine, whatever moves the bytes.
//
// The engine asks for ready steps, starts them, and reports completions. A Send completes
// when its message has been delivered; a Recv when its message has arrived (and been reduced).
// Every call is O(1) amortized per step plus sorting the batch TakeReady returns, so an
// engine may call it per message.
//
// The tracker takes the schedule from a StepSource a batch at a time (step_source.h): the next
// batch when a step of the last one completes, or when a message arrives for a receive it has
// not taken yet. It holds the steps from the oldest one not yet completed to the newest taken,
// and forgets the others: a ring's source hands out a ring step per batch, so a rank running a
// ring holds the ring steps in flight, not the whole ring.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/recycling_queue.h"
#include "collectives/schedule.h"
#include "collectives/step_source.h"

namespace nbox::coll {

class StepTracker {
 public:
  // Throws std::invalid_argument, here or later from the call that takes a batch, if the source
  // gives steps whose ids do not continue densely, or a dependency that names the step itself,
  // a step not taken yet or one of a later batch.
  explicit StepTracker(std::unique_ptr<StepSource> source);
  // The whole schedule, copied: one batch.
  explicit StepTracker(const RankSchedule& schedule);

  // Steps whose dependencies are all complete and that have not been handed out yet,
  // in ascending id order. Each step is returned exactly once. A Send is held back until
  // every lower-id Send to the same (peer, channel) has been handed out, so an engine that
  // starts steps in the order returned posts each connection's messages in id order, as the
  // matching rule requires. (That is an order of starting, not of completing: messages of a
  // connection stay pipelined.)
  std::vector<uint32_t> TakeReady();
  // The same into `taken` (cleared first), whose storage the tracker keeps for its next ready
  // steps: an engine that calls it per message with one vector allocates nothing.
  void TakeReady(std::vector<uint32_t>& taken);

  // Reports that a handed-out step finished. Throws std::logic_error if the step was not
  // handed out or was already completed.
  void Complete(uint32_t step_id);

  // The matching rule from the receiving side: the Recv step that the next message arriving
  // from `peer` on `channel` belongs to. Each call consumes one. Throws std::logic_error if
  // this rank expects no further message from there.
  uint32_t MatchArrival(int peer, int channel);
  // Whether a further message from `peer` on `channel` belongs to this schedule. An engine
  // running several collectives in order on one communicator hands an arrival to the first
  // tracker that still expects one from there. (Takes batches until it finds one, or to the
  // end of the schedule when there is none.)
  bool ExpectsArrival(int peer, int channel);

  // A step the tracker holds: one handed out or matched and not completed yet, at least.
  // Throws std::logic_error for a step it no longer (or not yet) holds.
  const Step& step(uint32_t step_id) const;
  // Whether TakeReady has handed the step out and it has not completed.
  bool IsHandedOut(uint32_t step_id) const;

  bool Done() const { return exhausted_ && window_.empty(); }
  size_t completed() const { return completed_; }
  int rank() const { return source_->rank(); }
  // Steps held now (from the oldest not completed to the newest taken from the source).
  size_t held() const { return window_.size(); }

 private:
  enum class State : uint8_t {
    kWaiting,  // dependencies missing
    kHeld,     // a Send with its dependencies met, behind an earlier Send of its connection
    kReady,    // in ready_
    kTaken,    // handed out by TakeReady
    kCompleted,
  };

  struct Entry {
    Step step;
    State state = State::kWaiting;
    uint32_t missing = 0;           // dependencies not complete
    uint32_t lane = 0;              // index into send_lanes_ or recv_lanes_
    std::vector<uint32_t> waiters;  // held steps that depend on this one
  };

  // Sends to, or Recvs from, one (peer, channel), taken and not yet released (Sends) or
  // matched (Recvs), in id order. (A std::deque allocated two blocks per lane: an all-to-all
  // builds two lanes per peer per collective, 2.2 M deques in a 32-rank MoE job.)
  struct Lane {
    RecyclingQueue<uint32_t> steps;
  };

  // Takes the next batch from the source; false when it has no more.
  bool TakeBatch();
  // The lane of (peer, channel) among the Sends or the Recvs, added if new. A ring's batches
  // all use the same two lanes: the last one of each kind is remembered, so that most steps
  // find theirs without searching the index.
  uint32_t LaneOf(bool send, int peer, int channel);
  Entry& At(uint32_t step_id) { return window_[step_id - base_]; }
  const Entry& At(uint32_t step_id) const { return window_[step_id - base_]; }
  bool IsComplete(uint32_t step_id) const;
  void OnDependenciesMet(uint32_t step_id);
  void ReleaseSends(Lane& lane);
  Lane* RecvLane(int peer, int channel);  // taking batches until it has a step, if any

  std::unique_ptr<StepSource> source_;
  RecyclingQueue<Entry> window_;  // steps base_ .. base_ + size - 1
  uint32_t base_ = 0;
  uint32_t last_batch_begin_ = 0;
  bool exhausted_ = false;
  std::vector<Step> batch_;  // scratch for TakeBatch
  std::vector<uint32_t> ready_;
  std::vector<Lane> send_lanes_;
  std::vector<Lane> recv_lanes_;
  std::map<std::pair<int, int>, uint32_t> send_lane_index_;  // (peer, channel) -> lane
  std::map<std::pair<int, int>, uint32_t> recv_lane_index_;
  static constexpr uint32_t kNoLane = UINT32_MAX;
  struct LaneMemo {
    int peer = 0;
    int channel = 0;
    uint32_t lane = kNoLane;
    bool Holds(int p, int c) const { return lane != kNoLane && peer == p && channel == c; }
  };
  LaneMemo last_send_lane_;
  LaneMemo last_recv_lane_;
  size_t completed_ = 0;
};

}  // namespace nbox::coll
