// NCCL's three protocols and what each costs a collective, from NCCL 2.20.3's cost model
// (src/graph/tuning.cc, ncclTopoTuneModel): the figures NCCL's tuner weighs them by, which nbox
// also charges a simulated collective (docs: collectives/README.md, "Protocols").
//
//   - LL (low latency): 8-byte stores of 4 bytes of data and a 4-byte flag, polled by the
//     receiver: the shortest hops, a quarter of the link's rate for a ring that reduces or
//     leaves a server (a third otherwise), 1 / 3.8 of the tree's;
//   - LL128: 128-byte lines of 120 bytes of data and a flag: 0.92 of the link's rate (0.7 with
//     one GPU per node), hops between LL's and Simple's;
//   - Simple: whole chunks behind a memory fence: the link's rate, the longest hops.
//
// A protocol's cost is a latency once per collective (NCCL's baseLat), a latency per message
// hop inside a server (NVLink) and between servers (the network: hwLat, where a ring that leaves
// its servers pays at least the network's post overhead on every hop), and the share of the
// links' rate its data moves at. Protocol::kIdeal costs nothing: data at the links' rate, no
// latency but the network's own (what nbox simulated before it modelled protocols).
#pragma once

#include <cstdint>

#include "collectives/schedule.h"

namespace nbox::coll {

struct ProtocolCost {
  double base_us = 0;       // once per collective
  double intra_hop_us = 0;  // per message hop between GPUs of one server
  double inter_hop_us = 0;  // per message hop between servers
  double rate_share = 1;    // of the links' rate, for the protocol's data (0 < share <= 1)

  bool Free() const { return base_us == 0 && intra_hop_us == 0 && inter_hop_us == 0; }
};

// The shape of a group as NCCL's model sees it: its nodes (servers; every rank its own node
// when the job has no servers) and whether a node's GPUs talk over NVLink.
struct ProtocolGroup {
  int ranks = 1;
  int nodes = 1;
  bool nvlink = false;  // more than one member per node, on NVLink
};

// What `protocol` costs `algorithm` running `op` in `group`. Algorithms NCCL does not have
// (direct, halving-doubling, hierarchical, all-to-all) pay the ring's figures.
ProtocolCost CostOf(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                    const ProtocolGroup& group);

// The latency a collective pays on its critical path in `group`, in microseconds: the base
// latency and every hop's (ring: all-reduce 2 (W - 1) hops, 2 x nodes of them between servers;
// all-gather and reduce-scatter W - 1, nodes - 1 between servers; broadcast and reduce W, nodes
// between servers; tree: 2 x (ranks per node - 1) hops inside and 2 x floor(log2 nodes)
// between, half that for a broadcast or reduce; direct: one hop per phase; halving-doubling:
// one per round), never more crossings than hops. A simulated schedule pays the base once and
// every hop as its messages take it; a collective timed whole (the analytical model) pays the
// base first and the hops on its critical path.
double CriticalPathLatencyMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                                 const ProtocolGroup& group);
// Its hops alone (the latency above less the base latency): what a pipelined ring can hide
// behind its chunks, as its messages do on the message-level models.
double CriticalPathHopMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                             const ProtocolGroup& group);

// The same as NCCL's tuner counts it: a ring all-reduce over nodes of one rank each counts
// 2 x nodes crossings in 2 (W - 1) hops (and -2 hops inside a node).
double NcclLatencyMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                         const ProtocolGroup& group);

// The bytes a message of `bytes` puts on the wire at `rate_share` of the links' rate: the
// protocol's flags and its slower pace, charged as bytes (at least `bytes`).
uint64_t WireBytes(uint64_t bytes, double rate_share);

}  // namespace nbox::coll
