// Point-to-point transfers of one rank, issued together (ncclGroupStart, ncclSend/ncclRecv
// calls, ncclGroupEnd): a pipeline stage's "send activations to the next stage and receive
// gradients from it" is one such group. Each transfer is a Send or a Recv of its own region
// of the rank's buffer, all independent, on one channel (the communicator's point-to-point
// lane). The matching rule is the collectives' own: the n-th Send from a to b on the channel
// matches the n-th Recv b posts from a on it, so both sides must list a connection's
// transfers in the same order.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

struct Transfer {
  StepKind kind = StepKind::kSend;
  int peer = 0;        // group rank of the other side
  uint64_t bytes = 0;  // > 0
};

// Throws std::invalid_argument for a transfer of 0 bytes or to the rank itself, or a peer
// outside 0..world_size-1.
RankSchedule BuildTransfersRankSchedule(int rank, int world_size,
                                        const std::vector<Transfer>& transfers, int channel);

}  // namespace nbox::coll
