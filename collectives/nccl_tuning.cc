#include "collectives/nccl_tuning.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace nbox::coll {
namespace {

// NCCL 2.20.3's constants for the Simple protocol, in microseconds and GB/s.
constexpr double kRingBaseLatency = 8.4;
constexpr double kRingNvlinkLatency = 3.4;
constexpr double kRingNetLatency = 14.0;
constexpr double kNetPostOverhead = 1.0 * 3;  // x86 Intel, tripled for Simple
constexpr double kTreeHopLatency = 28.0;      // NVLink and network alike
constexpr double kTreeBandwidthShare = 0.92;
// Hopper's per-channel tree bandwidth cap for 1, 2 and more nodes.
constexpr std::array<double, 3> kTreeMaxChannelBandwidth = {38.7, 41.4, 36.0};
// The tree's bandwidth correction, Simple protocol, for log2(bytes / 64) = 0..22.
constexpr std::array<double, 23> kTreeCorrection = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                                    .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

int Log2Floor(uint64_t value) {
  int log = 0;
  while (value >>= 1) ++log;
  return log;
}

}  // namespace

double NcclAllReduceMicros(Algorithm algorithm, uint64_t bytes, const NcclTuningInputs& inputs) {
  if (inputs.ranks < 2 || inputs.nodes < 1 || inputs.channels < 1) {
    throw std::invalid_argument("NcclAllReduceMicros: needs 2 or more ranks, nodes and channels");
  }
  const int ranks = inputs.ranks;
  const int nodes = inputs.nodes;
  const double bus_gbps = (nodes <= 2 ? inputs.intra_bytes_per_s : inputs.inter_bytes_per_s) / 1e9;
  double bandwidth = 0;
  double latency = 0;
  if (algorithm == Algorithm::kRing) {
    const int steps = 2 * (ranks - 1);
    const int inter_steps = nodes > 1 ? 2 * nodes : 0;
    bandwidth = bus_gbps * ranks / steps;
    const double intra =
        nodes > 1 ? std::max(kRingNvlinkLatency, kNetPostOverhead) : kRingNvlinkLatency;
    latency = kRingBaseLatency + (steps - inter_steps) * intra + inter_steps * kRingNetLatency;
    if (nodes > 1 && bytes / (static_cast<uint64_t>(inputs.channels) * ranks) >= 64) {
      latency *= 1.4;  // NCCL's ring plateau (sm_80 and later)
    }
  } else if (algorithm == Algorithm::kTree) {
    const double cap = inputs.channels * kTreeMaxChannelBandwidth[std::min(nodes, 3) - 1];
    bandwidth = std::min(bus_gbps * kTreeBandwidthShare, cap) * 0.5;
    const int log_size = Log2Floor(bytes >> 6);
    if (log_size < static_cast<int>(kTreeCorrection.size())) bandwidth *= kTreeCorrection[log_size];
    latency = 2 * ((ranks / nodes - 1) * kTreeHopLatency + Log2Floor(nodes) * kTreeHopLatency);
  } else {
    throw std::invalid_argument("NcclAllReduceMicros: NCCL's tuner picks Ring or Tree only");
  }
  return latency + static_cast<double>(bytes) / (1000 * bandwidth);
}

Algorithm NcclAutoAllReduce(uint64_t bytes, const NcclTuningInputs& inputs) {
  if (inputs.ranks < 2) return Algorithm::kRing;
  return NcclAllReduceMicros(Algorithm::kTree, bytes, inputs) <
                 NcclAllReduceMicros(Algorithm::kRing, bytes, inputs)
             ? Algorithm::kTree
             : Algorithm::kRing;
}

}  // namespace nbox::coll
