// collectives.allreduce = auto: the choice NCCL's tuner makes between its ring and its tree for
// an all-reduce, from NCCL 2.20.3's cost model (src/graph/tuning.cc: ncclTopoTuneModel and
// ncclTopoGetAlgoTime), restricted to what nbox models:
//   - the Simple protocol only (LL and LL128 are GPU-memory protocols nbox does not model);
//   - no CollNet or NVLS (no in-network reduction), one GPU type: Hopper (sm_90) for the
//     tree's per-channel bandwidth cap, an x86 Intel host for the network post overhead;
//   - the tree graph's TREE-pattern discount (x 0.85) is not applied.
// Time in microseconds = latency + bytes / (1000 x bandwidth in GB/s):
//   ring: bandwidth = busBw x W / (2(W-1)), busBw = the rank's link rate (NVLink when the job
//     spans at most 2 nodes, else the NIC); latency = 8.4 + (2(W-1) - s) x 3.4 + s x 14.0,
//     s = 2 x nodes inter-node steps when nodes > 1 (0 otherwise), x 1.4 when nodes > 1 and
//     bytes / (channels x W) >= 64 (the ring's "plateau");
//   tree: bandwidth = min(0.92 x busBw, channels x 36.0 (38.7 on 1 node, 41.4 on 2)) x 0.5,
//     times NCCL's correction factor for log2(bytes / 64) < 23; latency =
//     2 x ((W / nodes - 1) x 28 + floor(log2 nodes) x 28).
// The smaller time wins (the ring on a tie). docs: collectives/README.md, "auto".
#pragma once

#include <cstdint>

#include "collectives/schedule.h"

namespace nbox::coll {

struct NcclTuningInputs {
  int ranks = 1;
  int nodes = 1;  // servers; every rank is its own node when the job has no servers
  int channels = 1;
  double intra_bytes_per_s = 0;  // a GPU's scale-up (NVLink) rate, or its NIC's without servers
  double inter_bytes_per_s = 0;  // a GPU's NIC rate
};

// NCCL's modelled all-reduce time in microseconds for algorithm kRing or kTree.
double NcclAllReduceMicros(Algorithm algorithm, uint64_t bytes, const NcclTuningInputs& inputs);

// kRing or kTree, whichever NcclAllReduceMicros says is faster (kRing on a tie).
Algorithm NcclAutoAllReduce(uint64_t bytes, const NcclTuningInputs& inputs);

}  // namespace nbox::coll
