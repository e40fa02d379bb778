// NCCL 2.20.3's cost-model constants (src/graph/tuning.cc), for a Hopper GPU (sm_90) and an
// x86 Intel host: what protocol.h charges a simulated collective and nccl_tuning.h weighs the
// choices by. Latencies in microseconds, bandwidths in GB/s. docs: collectives/README.md.
#pragma once

#include <array>

#include "collectives/schedule.h"

namespace nbox::coll::nccl {

// NCCL's table indices.
inline constexpr int kTree = 0;
inline constexpr int kRing = 1;
inline constexpr int kLl = 0;
inline constexpr int kLl128 = 1;
inline constexpr int kSimple = 2;
inline constexpr int kNvlink = 0;
inline constexpr int kPci = 1;
inline constexpr int kNet = 2;

// Protocol::kLl, kLl128, kSimple as NCCL's index (kIdeal has none: callers check first).
inline int ProtocolIndex(Protocol protocol) {
  return protocol == Protocol::kLl ? kLl : protocol == Protocol::kLl128 ? kLl128 : kSimple;
}

// baseLat: once per collective, [tree, ring][LL, LL128, Simple].
inline constexpr double kBaseLatencyUs[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};

// hwLat: per hop, [NVLink, PCI, network][tree, ring][LL, LL128, Simple].
inline constexpr double kHopLatencyUs[3][2][3] = {
    {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
};

// The network post overhead of an x86 Intel host (getNetOverhead), tripled for Simple.
inline constexpr double kNetPostOverheadUs = 1.0;

// Rate shares of the protocols' refinements.
inline constexpr double kTreeShare = 0.92;
inline constexpr double kTreeLlDivisor = 3.8;
inline constexpr double kLl128RingShare = 0.92;
inline constexpr double kLl128OneGpuPerNodeShare = 0.7;
inline constexpr double kLl128OneNodeTreeShare = 7.0 / 9.0;
inline constexpr double kLl128MultiNodeTreeShare = 120.0 / 128.0;

// Caps by nodes: [1, 2, more]. LL's whole bus bandwidth (a Hopper GPU on one node; an Intel
// host's on several); per channel: the ring's LL128, the tree's LL128, the tree's Simple.
inline constexpr std::array<double, 3> kLlMaxBusBandwidth = {87.7, 39.0, 20.4};
inline constexpr std::array<double, 3> kRingLl128MaxPerChannel = {36.7, 36.7, 36.7};
inline constexpr std::array<double, 3> kTreeLl128MaxPerChannel = {36.7, 36.7, 29.0};
inline constexpr std::array<double, 3> kTreeMaxPerChannel = {38.7, 41.4, 36.0};

// The tree's correction factor for log2(bytes / 64) = 0..22, [LL, LL128, Simple].
inline constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

// The ring's "plateau": Simple all-reduces across nodes pay 1.4 times their latency (sm_80 and
// later) once each rank's share of a channel is 64 bytes or more.
inline constexpr double kRingPlateau = 1.4;

}  // namespace nbox::coll::nccl
