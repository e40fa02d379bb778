#include "collectives/nccl_tuning.h"

#include <algorithm>
#include <stdexcept>

#include "collectives/log2.h"
#include "collectives/nccl_constants.h"
#include "collectives/protocol.h"

namespace nbox::coll {
namespace {

// The steps of a ring running `op` over `ranks` ranks, as NCCL counts them.
int RingSteps(CollectiveOp op, int ranks) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2 * (ranks - 1);
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      return ranks - 1;
    default:
      return ranks;
  }
}

// The bus bandwidth `protocol` reaches with `algorithm`, before the algorithm's ratio, in GB/s.
double ProtocolBusBandwidth(CollectiveOp op, Algorithm algorithm, Protocol protocol,
                            const NcclTuningInputs& inputs, const ProtocolGroup& group) {
  const int caps = std::min(inputs.nodes, 3) - 1;
  const double bus =
      (inputs.nodes <= 2 ? inputs.intra_bytes_per_s : inputs.inter_bytes_per_s) / 1e9;
  const double share = CostOf(protocol, algorithm, op, group).rate_share;
  const double channels = inputs.channels;
  if (algorithm == Algorithm::kTree) {
    const double tree = std::min(bus * nccl::kTreeShare, channels * nccl::kTreeMaxPerChannel[caps]);
    switch (protocol) {
      case Protocol::kLl:
        return std::min(tree / nccl::kTreeLlDivisor, nccl::kLlMaxBusBandwidth[caps]);
      case Protocol::kLl128:
        return std::min(tree * share / nccl::kTreeShare,
                        channels * nccl::kTreeLl128MaxPerChannel[caps]);
      default:
        return tree;
    }
  }
  switch (protocol) {
    case Protocol::kLl:
      return std::min(bus * share, nccl::kLlMaxBusBandwidth[caps]);
    case Protocol::kLl128:
      return std::min(bus * share, channels * nccl::kRingLl128MaxPerChannel[caps]);
    default:
      return bus;
  }
}

}  // namespace

double NcclMicros(CollectiveOp op, Algorithm algorithm, Protocol protocol, uint64_t bytes,
                  const NcclTuningInputs& inputs) {
  if (inputs.ranks < 2 || inputs.nodes < 1 || inputs.channels < 1) {
    throw std::invalid_argument("NcclMicros: needs 2 or more ranks, nodes and channels");
  }
  if (protocol == Protocol::kIdeal) {
    throw std::invalid_argument("NcclMicros: NCCL's protocols are LL, LL128 and Simple");
  }
  if (algorithm != Algorithm::kRing &&
      !(algorithm == Algorithm::kTree && op == CollectiveOp::kAllReduce)) {
    throw std::invalid_argument("NcclMicros: NCCL's tuner picks the ring, or a tree to all-reduce");
  }
  // NVLink's hop latencies inside a node. A ring whose every rank is its own node counts
  // 2 (W - 1) - 2 W = -2 hops inside one in NCCL's formula; nbox has always taken NVLink's.
  const ProtocolGroup group{inputs.ranks, inputs.nodes, true};
  double bandwidth = ProtocolBusBandwidth(op, algorithm, protocol, inputs, group);
  double latency = NcclLatencyMicros(protocol, algorithm, op, group);
  const int p = nccl::ProtocolIndex(protocol);
  if (algorithm == Algorithm::kRing) {
    bandwidth *= static_cast<double>(inputs.ranks) / RingSteps(op, inputs.ranks);
    if (protocol == Protocol::kSimple && op == CollectiveOp::kAllReduce && inputs.nodes > 1 &&
        bytes / (static_cast<uint64_t>(inputs.channels) * inputs.ranks) >= 64) {
      latency *= nccl::kRingPlateau;
    }
  } else {
    bandwidth *= 0.5;
    const int log_size = Log2Floor(bytes >> 6);
    if (log_size < 23) bandwidth *= nccl::kTreeCorrection[p][log_size];
  }
  return latency + static_cast<double>(bytes) / (1000 * bandwidth);
}

NcclChoice NcclFastest(CollectiveOp op, uint64_t bytes, const NcclTuningInputs& inputs,
                       const std::vector<Algorithm>& algorithms,
                       const std::vector<Protocol>& protocols) {
  if (algorithms.empty() || protocols.empty()) {
    throw std::invalid_argument("NcclFastest: needs an algorithm and a protocol to choose from");
  }
  NcclChoice best{algorithms.front(), protocols.front()};
  if (inputs.ranks < 2) return best;
  double best_time = -1;
  for (Algorithm algorithm : algorithms) {
    for (Protocol protocol : protocols) {
      const double time = NcclMicros(op, algorithm, protocol, bytes, inputs);
      if (best_time < 0 || time < best_time) {
        best_time = time;
        best = {algorithm, protocol};
      }
    }
  }
  return best;
}

}  // namespace nbox::coll
