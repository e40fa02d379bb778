#include "collectives/protocol.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "collectives/log2.h"
#include "collectives/nccl_constants.h"

namespace nbox::coll {
namespace {

// NCCL's algorithm row of its tables: the tree's for a tree, the ring's for everything else.
bool IsTree(Algorithm algorithm) {
  return algorithm == Algorithm::kTree;
}

struct Hops {
  int intra = 0;
  int inter = 0;
};

// The message hops on a collective's critical path, split by where they run, as NCCL's model
// counts them: a ring crosses between nodes `nodes` times a lap, so an all-reduce's 2 (W - 1)
// steps count 2 x nodes crossings, which is 2 more than its steps when every rank is its own
// node. `physical` keeps the crossings within the steps, as a simulated ring takes them.
Hops CriticalPathHops(Algorithm algorithm, CollectiveOp op, const ProtocolGroup& group,
                      bool physical) {
  const int ranks = std::max(group.ranks, 1);
  const int nodes = std::max(group.nodes, 1);
  const int per_node = std::max(ranks / nodes, 1);
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  auto split = [nodes, physical](int steps, int inter) {
    if (physical) inter = std::min(inter, steps);
    return nodes > 1 ? Hops{steps - inter, inter} : Hops{steps, 0};
  };
  switch (algorithm) {
    case Algorithm::kTree:
      if (all_reduce) return {2 * (per_node - 1), 2 * Log2Floor(nodes)};
      return {per_node - 1, Log2Floor(nodes)};
    case Algorithm::kDirect: {
      const int phases = all_reduce ? 2 : 1;
      return split(phases, phases);
    }
    case Algorithm::kHalvingDoubling: {
      const int phases = all_reduce ? 2 : 1;
      return {phases * Log2Ceil(per_node), phases * Log2Ceil(nodes)};
    }
    case Algorithm::kHierarchical:
      if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV) {
        return split(2, 1);
      }
      return {2 * (per_node - 1), 2 * (nodes - 1)};
    case Algorithm::kRing:
      break;
  }
  switch (op) {
    case CollectiveOp::kAllReduce:
      return split(2 * (ranks - 1), 2 * nodes);
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      return split(ranks - 1, nodes - 1);
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return split(ranks, nodes);
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return split(1, 1);
  }
  return {};
}

}  // namespace

ProtocolCost CostOf(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                    const ProtocolGroup& group) {
  ProtocolCost cost;
  if (protocol == Protocol::kIdeal) return cost;
  const int p = nccl::ProtocolIndex(protocol);
  const int a = IsTree(algorithm) ? nccl::kTree : nccl::kRing;
  const bool multi_node = group.nodes > 1;
  cost.base_us = nccl::kBaseLatencyUs[a][p];
  cost.intra_hop_us = nccl::kHopLatencyUs[group.nvlink ? nccl::kNvlink : nccl::kPci][a][p];
  cost.inter_hop_us = nccl::kHopLatencyUs[nccl::kNet][a][p];
  if (!IsTree(algorithm) && multi_node) {
    // A ring that leaves its servers posts a network send on every step.
    const double post = nccl::kNetPostOverheadUs * (protocol == Protocol::kSimple ? 3 : 1);
    cost.intra_hop_us = std::max(cost.intra_hop_us, post);
  }
  const double per_node = static_cast<double>(group.ranks) / std::max(group.nodes, 1);
  const bool reduces_or_leaves =
      multi_node || op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduce;
  if (IsTree(algorithm)) {
    cost.rate_share = nccl::kTreeShare;
    if (protocol == Protocol::kLl) cost.rate_share /= nccl::kTreeLlDivisor;
    if (protocol == Protocol::kLl128) {
      cost.rate_share *= multi_node ? nccl::kLl128MultiNodeTreeShare : nccl::kLl128OneNodeTreeShare;
    }
  } else if (protocol == Protocol::kLl) {
    cost.rate_share = reduces_or_leaves ? 1.0 / 4.0 : 1.0 / 3.0;
  } else if (protocol == Protocol::kLl128) {
    cost.rate_share = per_node < 2 ? nccl::kLl128OneGpuPerNodeShare : nccl::kLl128RingShare;
  }
  return cost;
}

namespace {

double LatencyMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                     const ProtocolGroup& group, bool physical, bool with_base = true) {
  if (protocol == Protocol::kIdeal || group.ranks < 2) return 0;
  const ProtocolCost cost = CostOf(protocol, algorithm, op, group);
  const Hops hops = CriticalPathHops(algorithm, op, group, physical);
  return (with_base ? cost.base_us : 0) + hops.intra * cost.intra_hop_us +
         hops.inter * cost.inter_hop_us;
}

}  // namespace

double CriticalPathLatencyMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                                 const ProtocolGroup& group) {
  return LatencyMicros(protocol, algorithm, op, group, /*physical=*/true);
}

double CriticalPathHopMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                             const ProtocolGroup& group) {
  return LatencyMicros(protocol, algorithm, op, group, /*physical=*/true, /*with_base=*/false);
}

double NcclLatencyMicros(Protocol protocol, Algorithm algorithm, CollectiveOp op,
                         const ProtocolGroup& group) {
  return LatencyMicros(protocol, algorithm, op, group, /*physical=*/false);
}

uint64_t WireBytes(uint64_t bytes, double rate_share) {
  if (!(rate_share > 0) || rate_share > 1) {
    throw std::invalid_argument("WireBytes: the rate share must be in (0, 1]");
  }
  if (rate_share == 1) return bytes;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / rate_share));
}

}  // namespace nbox::coll
