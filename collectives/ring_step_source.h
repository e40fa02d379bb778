// The ring algorithms' steps (NCCL's Ring with channels and chunking), one ring step at a time.
//
// What a ring step moves, and why the dependencies are what they are, is in ring.cc's file
// comment. Here the dependencies come from closed forms instead of from a table of the regions
// each step touched (rank_schedule_builder.h), so that the source holds O(1) state per ring
// step still in flight and nothing per segment of the buffer: chunk k of a block that a step
// receives is sent on at the next ring step (read after write), and in an all-reduce a chunk
// the all-gather receives into was sent by the reduce-scatter W - 1 ring steps earlier (write
// after read). BuildRingRankSchedule drains this source; tests/collectives/
// ring_step_source_test.cc checks it step for step against the region-table derivation.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/layout.h"
#include "collectives/recycling_queue.h"
#include "collectives/ring_order.h"
#include "collectives/step_source.h"

namespace nbox::coll {

class RingStepSource : public StepSource {
 public:
  // `spec` must be valid with algorithm kRing and op all-reduce, all-gather or reduce-scatter,
  // and 0 <= rank < world_size. Throws std::invalid_argument, as the ring's builder does, when
  // the schedule would exceed kMaxStepsPerRank.
  RingStepSource(const CollectiveSpec& spec, int rank);

  int rank() const override { return rank_; }
  // One ring step on every channel (the next non-empty one).
  bool NextBatch(std::vector<Step>& steps) override;
  void Retire(uint32_t first_live) override;

 private:
  // What ring step `g` moves on `channel`.
  struct Move {
    int send_segment = 0;
    int recv_segment = 0;
    int send_chunks = 0;
    int recv_chunks = 0;
    ElementRange send_block;  // the blocks (segment, channel) whose chunks it moves
    ElementRange recv_block;
  };
  Move MoveAt(int g, int channel) const;
  // What a kept ring step moves on a channel, and the id of its first step there: computed
  // once when the ring step is emitted (MoveAt divides), read again to name dependencies.
  struct KeptMove {
    Move move;
    uint32_t begin = 0;
  };
  const KeptMove& KeptAt(int g, int channel) const;
  bool InReduceScatter(int g) const { return reduce_scatter_ && g < phase_steps_; }
  uint32_t SendId(int g, int channel, int k) const;
  uint32_t RecvId(int g, int channel, int k) const;
  bool Kept(int g) const { return g >= first_kept_; }

  CollectiveSpec spec_;
  int rank_;
  BlockLayout layout_;
  std::vector<RingOrder> orders_;  // per channel
  std::vector<int> positions_;     // the rank's ring position per channel
  int phase_steps_;                // W - 1
  bool reduce_scatter_;
  bool all_gather_;
  int ring_steps_;  // phase_steps_ per phase
  int next_ = 0;    // the next ring step to emit
  uint32_t next_id_ = 0;
  // Ring steps first_kept_ .. next_ - 1, those not known to be complete: channels entries each.
  int first_kept_ = 0;
  RecyclingQueue<KeptMove> kept_;
};

}  // namespace nbox::coll
