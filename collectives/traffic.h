// What a collective puts on each connection, in closed form: the bytes every (src, dst,
// channel) lane carries over the whole collective and the message steps a chunk waits for on
// its critical path, computed from the spec without building any rank's schedule. The
// analytical network model times whole collectives from it (docs/DESIGN.md, "The analytical
// model"); tests check it against the sum of the schedules' Send steps.
//
// Cost: O(world_size x channels) for the rings, the hierarchical all-reduce, the tree and the
// chains (broadcast, reduce); O(world_size x log2 world_size x channels) for halving-doubling;
// O(world_size^2 x channels) for the all-to-alls and the direct algorithms (every
// pair is a lane). Memory
// O(1): lanes are visited, not stored.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

struct LaneTraffic {
  int src = 0;  // group ranks
  int dst = 0;
  int channel = 0;
  uint64_t bytes = 0;  // > 0: every Send of src to dst on channel in the collective, summed
  int stage = 0;       // index into CriticalPath(spec).steps
};

// The message latencies a chunk pays from the collective's start to its end, grouped by the
// lanes that carry them: a chunk crosses steps[s] hops of stage s, each on some lane of stage
// s. Ring all-reduce: one stage of 2(W-1) steps; all-gather, reduce-scatter: W-1; broadcast,
// reduce: W-1 (the chain); hierarchical all-reduce: stage 0 inside servers, 2(G-1) steps, stage 1
// on the rails, 2(S-1); direct all-to-all: 1; hierarchical all-to-all: 1 inside servers, 1 across
// them; direct all-reduce: 2 (lanes in parallel), direct all-gather, reduce-scatter: 1.
struct CriticalPath {
  std::vector<int> steps;  // per stage
  // How the stages' latencies and the lanes' busy times combine into the collective's time
  // (docs/DESIGN.md, "The analytical model"):
  //  kRing: every rank sends in every step and a chunk moves one ring position per step, so
  //    it pays every lane's latency in turn: the time is the larger of the busiest lane's
  //    busy time and the sum over stages of (mean lane busy time + steps x mean lane
  //    latency). The first bounds a ring whose slow lanes have slack (a rail ring's NIC hops
  //    between NVLink hops), the second is the textbook lock-step ring.
  //  kChain: a pipelined chain (broadcast, reduce, the tree's up and down): steps x mean lane
  //    latency, plus the busiest lane's busy time times bandwidth_scale (the pipeline's fill).
  //  kParallel: every lane at once (all-to-all): the slowest lane's latency per stage, plus
  //    the busiest lane's busy time.
  //  kSequential: the stages one after the other (halving-doubling's rounds): per stage, its
  //    slowest lane's latency times its steps plus its busiest lane's busy time counting only
  //    that stage's bytes on each port.
  enum class Overlap { kRing, kChain, kParallel, kSequential };
  Overlap overlap = Overlap::kRing;
  // kChain only: the chain of W ranks with n chunks per channel takes W - 2 + n chunk times
  // where its busiest port is busy for n: 1 + (W - 2) / n. The tree, 2 x depth hops:
  // 1 + (2 depth - 1) / M, M the chunk messages its busiest port sends.
  double bandwidth_scale = 1;
};

// Calls `visit` once for every lane with bytes > 0, src-major. `spec` must be valid
// (ValidateSpec); throws std::invalid_argument otherwise.
void ForEachLane(const CollectiveSpec& spec, const std::function<void(const LaneTraffic&)>& visit);
// The lanes rank `src` sends on, in the same order: O(channels) for the rings, the
// hierarchical all-reduce, the tree and the chains, O(log2 world_size x channels) for
// halving-doubling, O(world_size x channels) for the all-to-alls and the direct algorithms.
void ForEachLaneOf(const CollectiveSpec& spec, int src,
                   const std::function<void(const LaneTraffic&)>& visit);

CriticalPath CriticalPathOf(const CollectiveSpec& spec);

}  // namespace nbox::coll
