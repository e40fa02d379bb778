// How many ranks' inputs each message of a collective carries.
//
// A message of a reduction combines the inputs of several ranks: in a ring all-reduce on W
// ranks, the message of reduce-scatter step s carries s+1 inputs and every all-gather message
// carries all W. A rank that stands in for others under NeuronaBox's homogeneity assumption
// (every rank holds the same data; bridge/ fills messages from emulated ranks this way) needs
// that number k to make up a message from its own input x: sum k·x, prod x^k, max/min x.
//
// Counted by running the schedule's data flow (no data, only counts), so it holds for every
// algorithm BuildSchedule knows: a rank's region starts with 1 if it holds the rank's input
// (everywhere for AllReduce and ReduceScatter, RankSegment(spec, r) for AllGather, the root's
// buffer for Broadcast) and 0 otherwise; a Send carries its region's count; a Recv that
// reduces adds the incoming count to its region's, one that copies takes it.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

// result[r][i]: the contributions of step i of schedule.ranks[r] (Send: what it sends; Recv:
// what it receives). Throws std::invalid_argument when the schedule's messages do not match
// (a Recv with no Send on its connection, or sizes that differ).
std::vector<std::vector<uint32_t>> MessageContributions(const Schedule& schedule);

}  // namespace nbox::coll
