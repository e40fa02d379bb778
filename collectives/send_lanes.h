// The connections a rank needs for a collective, without building its schedule where that is
// cheap: what a transport opens up front, as NCCL connects at communicator init.
#pragma once

#include <map>
#include <tuple>
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

// SendLanes of every rank of a spec, kept for the next communicator of the same shape: a job
// has many groups alike (every data-parallel ring of a tensor-parallel job, every gradient norm
// over a model-parallel group), and a spec whose ring blocks are not all filled builds each
// rank's schedule to find its lanes. A spec with all-to-all-v counts is no shape (its lanes
// depend on the matrix): std::invalid_argument; connections are opened for its dense
// all-to-all (NboxCommunicator::ConnectFor).
class SendLanesCache {
 public:
  // SendLanes(spec, r) for r = 0 .. spec.world_size - 1.
  const std::vector<std::vector<SendLane>>& EveryRank(const CollectiveSpec& spec);

 private:
  using Key = std::tuple<CollectiveOp, Algorithm, int, uint64_t, uint32_t, int, uint64_t, int, int>;
  std::map<Key, std::vector<std::vector<SendLane>>> lanes_;
};

// At least SendLanes(spec, r).size() for every rank r, in O(1): what a memory estimate counts
// before any connection is opened. Each algorithm's peers per channel: the ring's and the
// chain's next rank; the hierarchical all-reduce's next GPU in the server and next server on
// its rail; the tree's parent and children (4, both trees of a rooted two-tree counted);
// halving-doubling's partner per round (and the fold's and the answer's where W is not a power
// of two); the direct algorithms'
// and all-to-all's every other rank (hierarchical all-to-all: the server's other GPUs and the
// rail's other servers). Never more than (W - 1) x channels. `spec` must be valid.
uint64_t SendLaneBound(const CollectiveSpec& spec);

// At least SendLanes(spec, rank).size(), for that rank alone: a tree's parent and children on
// each channel (exact when every channel's slice holds an element; O(channels)), where the
// bound above charges every rank a server head's four neighbours in both trees: a leaf sends
// to its parent only, and a tree has 2 (W - 1) edge directions per channel, not 8 W.
// SendLaneBound(spec) for every other algorithm. `spec` must be valid and `rank` in it.
uint64_t SendLaneBound(const CollectiveSpec& spec, int rank);

// At least the lanes of SendLanes(spec, rank) that carry bytes, without building the schedule:
// exact for a direct all-to-all, whose every pair is connected up front although the pairs
// an all-to-all-v sends nothing to stay idle (a peer's bytes fill min(channels, elements)
// channels; O(W)); SendLaneBound(spec, rank) for every other spec. What a memory estimate
// charges a connection's traffic to. `spec` must be valid.
uint64_t CarryingLaneBound(const CollectiveSpec& spec, int rank);

}  // namespace nbox::coll
