// Appends steps to one rank's schedule and derives their dependencies from the regions they
// touch, so an algorithm only says what moves where, in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/region.h"
#include "collectives/schedule.h"

namespace nbox::coll {

// Steps are numbered in the order they are added; the order of a rank's Sends to one
// (peer, channel) and of its Recvs from one (peer, channel) is what the matching rule pairs.
//
// Dependencies are the hazards on the step's region and nothing else:
//   a Send (reads the region) waits for the last Recv that wrote it (read after write);
//   a Recv (writes it) waits for every Send that read it since that write (write after
//   read: the region must not change under a message still being sent), or, if none did,
//   for the last Recv that wrote it (write after write). Each of those Sends already waits
//   for that Recv, so the write-after-write edge would be redundant then.
// Regions passed in must be equal or disjoint (Region's contract).
class RankScheduleBuilder {
 public:
  RankScheduleBuilder(int rank, uint64_t buffer_bytes, size_t region_count);

  void AddSend(int peer, int channel, const Region& region);
  void AddRecv(int peer, int channel, const Region& region, bool reduce);

  RankSchedule Finish() &&;

 private:
  struct Hazards {
    std::optional<uint32_t> last_write;
    std::vector<uint32_t> reads_since_write;
  };

  Step& Append(StepKind kind, int peer, int channel, const Region& region);

  RankSchedule schedule_;
  std::vector<Hazards> hazards_;  // per region index
};

}  // namespace nbox::coll
