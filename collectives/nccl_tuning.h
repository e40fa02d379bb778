// collectives.<op> = auto and collectives.protocol = auto: the choice NCCL's tuner makes, from
// NCCL 2.20.3's cost model (src/graph/tuning.cc: ncclTopoTuneModel and ncclTopoGetAlgoTime;
// the constants in nccl_constants.h), restricted to what nbox models:
//   - ring and tree (all-reduce) or the ring (the other operations), with LL, LL128 and Simple;
//     no CollNet or NVLS (no in-network reduction);
//   - one GPU type, Hopper (sm_90), for LL128's enabling and the per-channel caps, and an x86
//     Intel host for the network post overhead and LL's cap across nodes;
//   - the bus bandwidth is the rank's link rate (NVLink when the group spans at most 2 nodes,
//     else the NIC), not NCCL's searched per-channel figure; the tree graph's TREE-pattern
//     discount (x 0.85) is not applied; a ring broadcast or reduce pays every hop's latency.
// Time in microseconds = latency + bytes / (1000 x bandwidth in GB/s), with
//   latency = CriticalPathLatencyMicros (protocol.h), x 1.4 for a Simple ring all-reduce across
//     nodes once bytes / (channels x W) >= 64 (the ring's "plateau");
//   bandwidth = the bus bandwidth x the protocol's share (protocol.h), capped: LL's whole bus
//     bandwidth (87.7 GB/s on one node, 39.0 on 2, 20.4 on more), the ring's LL128 36.7 GB/s a
//     channel, the tree's Simple 38.7 / 41.4 / 36.0 and LL128 36.7 / 36.7 / 29.0 a channel; then
//     the algorithm's: a ring moves W / steps of its bus bandwidth (all-reduce 2 (W - 1) steps,
//     all-gather and reduce-scatter W - 1, broadcast and reduce W), a tree 0.5, times NCCL's
//     correction for log2(bytes / 64) < 23.
// The smallest time wins (the ring, then the protocol listed first, on a tie). docs:
// collectives/README.md, "auto" and "Protocols".
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

struct NcclTuningInputs {
  int ranks = 1;
  int nodes = 1;  // servers; every rank is its own node when the job has no servers
  int channels = 1;
  double intra_bytes_per_s = 0;  // a GPU's scale-up (NVLink) rate, or its NIC's without servers
  double inter_bytes_per_s = 0;  // a GPU's NIC rate
};

// NCCL's modelled time in microseconds of `op` by `algorithm` (kRing, or kTree for an
// all-reduce) with `protocol` (not kIdeal).
double NcclMicros(CollectiveOp op, Algorithm algorithm, Protocol protocol, uint64_t bytes,
                  const NcclTuningInputs& inputs);

struct NcclChoice {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
};

// The fastest of `algorithms` x `protocols` (each list non-empty; protocols other than kIdeal)
// for `op`, as NcclMicros models them; the first listed wins a tie.
NcclChoice NcclFastest(CollectiveOp op, uint64_t bytes, const NcclTuningInputs& inputs,
                       const std::vector<Algorithm>& algorithms,
                       const std::vector<Protocol>& protocols);

}  // namespace nbox::coll
