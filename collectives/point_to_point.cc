#include "collectives/point_to_point.h"

#include <stdexcept>
#include <string>

#include "collectives/rank_schedule_builder.h"

namespace nbox::coll {

RankSchedule BuildTransfersRankSchedule(int rank, int world_size,
                                        const std::vector<Transfer>& transfers, int channel) {
  uint64_t buffer = 0;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    if (t.peer < 0 || t.peer >= world_size || t.peer == rank || t.bytes == 0) {
      throw std::invalid_argument(
          "transfer " + std::to_string(i) + " of rank " + std::to_string(rank) + ": " +
          (t.bytes == 0 ? std::string("0 bytes (expected at least 1)")
                        : "peer " + std::to_string(t.peer) + " is not another rank of 0.." +
                              std::to_string(world_size - 1)));
    }
    buffer += t.bytes;
  }
  RankScheduleBuilder steps(rank, buffer, transfers.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    const Region region{i, offset, t.bytes};
    if (t.kind == StepKind::kSend) {
      steps.AddSend(t.peer, channel, region);
    } else {
      steps.AddRecv(t.peer, channel, region, false);
    }
    offset += t.bytes;
  }
  return std::move(steps).Finish();
}

}  // namespace nbox::coll
