// The connections a rank needs for a collective, without building its schedule where that is
// cheap: what a transport opens up front, as NCCL connects at communicator init.
#pragma once

#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

struct SendLane {
  int peer = 0;  // group rank
  int channel = 0;

  bool operator==(const SendLane& other) const {
    return peer == other.peer && channel == other.channel;
  }
};

// The (peer, channel) pairs `rank` sends on in BuildRankSchedule(spec, rank), each once, in
// the order of its first Send there. O(channels) for a ring all-reduce, all-gather or
// reduce-scatter whose every block is non-empty (each channel sends only to its ring's next
// rank, from its first step on); otherwise it builds the rank's schedule and reads it, which
// costs O(steps). Throws std::invalid_argument for an invalid spec or rank.
std::vector<SendLane> SendLanes(const CollectiveSpec& spec, int rank);

}  // namespace nbox::coll
