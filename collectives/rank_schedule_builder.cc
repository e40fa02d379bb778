#include "collectives/rank_schedule_builder.h"

#include <utility>

namespace nbox::coll {

RankScheduleBuilder::RankScheduleBuilder(int rank, uint64_t buffer_bytes, size_t region_count)
    : hazards_(region_count) {
  schedule_.rank = rank;
  schedule_.buffer_bytes = buffer_bytes;
}

Step& RankScheduleBuilder::Append(StepKind kind, int peer, int channel, const Region& region) {
  Step& step = schedule_.steps.emplace_back();
  step.id = static_cast<uint32_t>(schedule_.steps.size() - 1);
  step.kind = kind;
  step.peer = peer;
  step.channel = channel;
  step.offset = region.offset;
  step.bytes = region.bytes;
  return step;
}

void RankScheduleBuilder::AddSend(int peer, int channel, const Region& region) {
  Step& step = Append(StepKind::kSend, peer, channel, region);
  Hazards& hazards = hazards_[region.index];
  if (hazards.last_write) step.deps.push_back(*hazards.last_write);
  hazards.reads_since_write.push_back(step.id);
}

void RankScheduleBuilder::AddRecv(int peer, int channel, const Region& region, bool reduce) {
  Step& step = Append(StepKind::kRecv, peer, channel, region);
  step.reduce = reduce;
  Hazards& hazards = hazards_[region.index];
  if (!hazards.reads_since_write.empty()) {
    step.deps = std::move(hazards.reads_since_write);
    hazards.reads_since_write.clear();
  } else if (hazards.last_write) {
    step.deps.push_back(*hazards.last_write);
  }
  hazards.last_write = step.id;
}

RankSchedule RankScheduleBuilder::Finish() && {
  return std::move(schedule_);
}

}  // namespace nbox::coll
