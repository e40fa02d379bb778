#include "collectives/hierarchical.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {
namespace {

int Mod(int value, int modulus) {
  return ((value % modulus) + modulus) % modulus;
}

class HierarchicalBuilder {
 public:
  HierarchicalBuilder(const CollectiveSpec& spec, int rank)
      : spec_(spec),
        gpus_(spec.ranks_per_server),
        servers_(spec.world_size / spec.ranks_per_server),
        server_(rank / gpus_),
        local_(rank % gpus_),
        grid_(spec, BlockOrder::kChannelMajor),
        steps_(rank, spec.bytes, grid_.region_count()) {}

  // Phase 1 (reduce) or 3 (gather), ring step t inside the server.
  void AddServerStep(int t, bool reduce_scatter) {
    const int next = RankOf(server_, local_ + 1);
    const int prev = RankOf(server_, local_ - 1);
    // The ring's segment naming (ring.cc) over local indices.
    const int send_segment = Mod(local_ - (reduce_scatter ? 1 + t : t), gpus_);
    const int recv_segment = Mod(local_ - (reduce_scatter ? 2 + t : 1 + t), gpus_);
    for (int channel = 0; channel < spec_.channels; ++channel) {
      for (int m = 0; m < servers_; ++m) {
        Move(next, prev, channel, Cell(send_segment, m), Cell(recv_segment, m), reduce_scatter);
      }
    }
  }

  // Phase 2, ring step t across servers among the GPUs of this local index, on its cells.
  void AddRailStep(int t, bool reduce_scatter) {
    const int next = RankOf(server_ + 1, local_);
    const int prev = RankOf(server_ - 1, local_);
    const int send_cell = Mod(server_ - (reduce_scatter ? 1 + t : t), servers_);
    const int recv_cell = Mod(server_ - (reduce_scatter ? 2 + t : 1 + t), servers_);
    for (int channel = 0; channel < spec_.channels; ++channel) {
      Move(next, prev, channel, Cell(local_, send_cell), Cell(local_, recv_cell), reduce_scatter);
    }
  }

  int gpus() const { return gpus_; }
  int servers() const { return servers_; }
  RankSchedule Finish() && { return std::move(steps_).Finish(); }

 private:
  int RankOf(int server, int local) const {
    return Mod(server, servers_) * gpus_ + Mod(local, gpus_);
  }
  int Cell(int segment, int sub_segment) const { return segment * servers_ + sub_segment; }

  // Sends cell `send` to `next` and receives cell `recv` from `prev`, chunk by chunk.
  void Move(int next, int prev, int channel, int send, int recv, bool reduce) {
    const int send_chunks = grid_.chunks(send, channel);
    const int recv_chunks = grid_.chunks(recv, channel);
    for (int k = 0; k < std::max(send_chunks, recv_chunks); ++k) {
      if (k < send_chunks) steps_.AddSend(next, channel, grid_.chunk(send, channel, k));
      if (k < recv_chunks) steps_.AddRecv(prev, channel, grid_.chunk(recv, channel, k), reduce);
    }
  }

  const CollectiveSpec& spec_;
  int gpus_;
  int servers_;
  int server_;
  int local_;
  BlockGrid grid_;  // W cells per channel slice
  RankScheduleBuilder steps_;
};

}  // namespace

uint64_t HierarchicalStepBound(const CollectiveSpec& spec) {
  if (spec.world_size == 1) return 0;
  // Per rank and cell, phases 1 and 3 send and receive a cell at most once each, and phase 2
  // sends and receives each cell of the rank's own segment at most twice: at most 8 steps per
  // chunk of the grid.
  return 8 * ChunkCountBound(spec);
}

RankSchedule BuildHierarchicalRankSchedule(const CollectiveSpec& spec, int rank) {
  if (spec.world_size == 1) return RankSchedule{rank, spec.bytes, {}};  // nothing to move
  CheckStepBound(spec, HierarchicalStepBound(spec), "hierarchical");
  HierarchicalBuilder builder(spec, rank);
  for (int t = 0; t < builder.gpus() - 1; ++t) builder.AddServerStep(t, /*reduce_scatter=*/true);
  for (int t = 0; t < builder.servers() - 1; ++t) builder.AddRailStep(t, /*reduce_scatter=*/true);
  for (int t = 0; t < builder.servers() - 1; ++t) builder.AddRailStep(t, /*reduce_scatter=*/false);
  for (int t = 0; t < builder.gpus() - 1; ++t) builder.AddServerStep(t, /*reduce_scatter=*/false);
  return std::move(builder).Finish();
}

}  // namespace nbox::coll
