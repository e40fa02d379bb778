// NCCL's protocols (collectives/protocol.h) and the tuner's choice among them
// (collectives/nccl_tuning.h), against NCCL 2.20.3's tables in src/graph/tuning.cc, worked by
// hand below.
#include "collectives/protocol.h"

#include <gtest/gtest.h>

#include "collectives/nccl_tuning.h"
#include "collectives/settings.h"

namespace nbox::coll {
namespace {

constexpr ProtocolGroup kOneServer{8, 1, true};    // a DGX: 8 GPUs on NVLink
constexpr ProtocolGroup kTwoServers{16, 2, true};  // two of them
constexpr ProtocolGroup kEightHosts{8, 8, false};  // a GPU per host

TEST(Protocols, TheIdealProtocolCostsNothing) {
  const ProtocolCost cost =
      CostOf(Protocol::kIdeal, Algorithm::kRing, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_EQ(cost.base_us, 0);
  EXPECT_EQ(cost.intra_hop_us, 0);
  EXPECT_EQ(cost.inter_hop_us, 0);
  EXPECT_EQ(cost.rate_share, 1);
  EXPECT_EQ(CriticalPathLatencyMicros(Protocol::kIdeal, Algorithm::kRing, CollectiveOp::kAllReduce,
                                      kTwoServers),
            0);
}

TEST(Protocols, EachProtocolCostsWhatNcclsTablesSay) {
  // Ring, Simple, across servers: baseLat 8.4; NVLink's hop 3.4 (above the tripled 1 us post
  // overhead); the network's 14.0; the whole rate.
  ProtocolCost simple =
      CostOf(Protocol::kSimple, Algorithm::kRing, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_DOUBLE_EQ(simple.base_us, 8.4);
  EXPECT_DOUBLE_EQ(simple.intra_hop_us, 3.4);
  EXPECT_DOUBLE_EQ(simple.inter_hop_us, 14.0);
  EXPECT_DOUBLE_EQ(simple.rate_share, 1.0);
  // Ring, LL: 6.6, NVLink 0.6 raised to the 1 us post overhead across servers, network 2.7; a
  // quarter of the rate to all-reduce, a third to all-gather inside one server.
  ProtocolCost ll = CostOf(Protocol::kLl, Algorithm::kRing, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_DOUBLE_EQ(ll.base_us, 6.6);
  EXPECT_DOUBLE_EQ(ll.intra_hop_us, 1.0);
  EXPECT_DOUBLE_EQ(ll.inter_hop_us, 2.7);
  EXPECT_DOUBLE_EQ(ll.rate_share, 0.25);
  EXPECT_DOUBLE_EQ(
      CostOf(Protocol::kLl, Algorithm::kRing, CollectiveOp::kAllGather, kOneServer).rate_share,
      1.0 / 3.0);
  EXPECT_DOUBLE_EQ(
      CostOf(Protocol::kLl, Algorithm::kRing, CollectiveOp::kAllGather, kOneServer).intra_hop_us,
      0.6);
  // Ring, LL128: 14.0, NVLink 1.9, network 4.0; 0.92 of the rate, 0.7 with a GPU per node.
  ProtocolCost ll128 =
      CostOf(Protocol::kLl128, Algorithm::kRing, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_DOUBLE_EQ(ll128.base_us, 14.0);
  EXPECT_DOUBLE_EQ(ll128.intra_hop_us, 1.9);
  EXPECT_DOUBLE_EQ(ll128.inter_hop_us, 4.0);
  EXPECT_DOUBLE_EQ(ll128.rate_share, 0.92);
  EXPECT_DOUBLE_EQ(
      CostOf(Protocol::kLl128, Algorithm::kRing, CollectiveOp::kAllReduce, kEightHosts).rate_share,
      0.7);
  // Tree: LL 6.8 / 0.6 / 5.0 at 0.92 / 3.8; LL128 at 0.92 x 7/9 on one node, x 120/128 on more;
  // Simple 0 / 28 / 28 at 0.92.
  ProtocolCost tree_ll =
      CostOf(Protocol::kLl, Algorithm::kTree, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_DOUBLE_EQ(tree_ll.base_us, 6.8);
  EXPECT_DOUBLE_EQ(tree_ll.intra_hop_us, 0.6);
  EXPECT_DOUBLE_EQ(tree_ll.inter_hop_us, 5.0);
  EXPECT_DOUBLE_EQ(tree_ll.rate_share, 0.92 / 3.8);
  EXPECT_DOUBLE_EQ(
      CostOf(Protocol::kLl128, Algorithm::kTree, CollectiveOp::kAllReduce, kOneServer).rate_share,
      0.92 * 7 / 9);
  EXPECT_DOUBLE_EQ(
      CostOf(Protocol::kLl128, Algorithm::kTree, CollectiveOp::kAllReduce, kTwoServers).rate_share,
      0.92 * 120 / 128);
  ProtocolCost tree_simple =
      CostOf(Protocol::kSimple, Algorithm::kTree, CollectiveOp::kAllReduce, kTwoServers);
  EXPECT_DOUBLE_EQ(tree_simple.base_us, 0);
  EXPECT_DOUBLE_EQ(tree_simple.intra_hop_us, 28);
  EXPECT_DOUBLE_EQ(tree_simple.rate_share, 0.92);
}

TEST(Protocols, TheCriticalPathCountsEveryHop) {
  // A Simple ring all-reduce of 16 GPUs on 2 servers: 8.4 + 26 hops inside x 3.4 + 4 between
  // x 14.0 = 152.8 us.
  EXPECT_NEAR(CriticalPathLatencyMicros(Protocol::kSimple, Algorithm::kRing,
                                        CollectiveOp::kAllReduce, kTwoServers),
              152.8, 1e-9);
  // Its hops alone, which a pipelined ring can hide behind its chunks: 26 x 3.4 + 4 x 14.0.
  EXPECT_NEAR(CriticalPathHopMicros(Protocol::kSimple, Algorithm::kRing, CollectiveOp::kAllReduce,
                                    kTwoServers),
              144.4, 1e-9);
  // A GPU per host: every one of the 14 hops crosses (NCCL's count would be 16 crossings and
  // -2 hops inside, at PCI's 5.7 us with no NVLink): 8.4 + 14 x 14.0 = 204.4 us.
  EXPECT_NEAR(CriticalPathLatencyMicros(Protocol::kSimple, Algorithm::kRing,
                                        CollectiveOp::kAllReduce, kEightHosts),
              204.4, 1e-9);
  EXPECT_NEAR(
      NcclLatencyMicros(Protocol::kSimple, Algorithm::kRing, CollectiveOp::kAllReduce, kEightHosts),
      8.4 + 16 * 14.0 - 2 * 5.7, 1e-9);
  // An LL all-gather in one server: 6.6 + 7 x 0.6 = 10.8 us.
  EXPECT_NEAR(CriticalPathLatencyMicros(Protocol::kLl, Algorithm::kRing, CollectiveOp::kAllGather,
                                        kOneServer),
              10.8, 1e-9);
  // An LL tree all-reduce on 2 servers: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us.
  EXPECT_NEAR(CriticalPathLatencyMicros(Protocol::kLl, Algorithm::kTree, CollectiveOp::kAllReduce,
                                        kTwoServers),
              25.2, 1e-9);
}

TEST(Protocols, WireBytesChargeTheProtocolsPace) {
  EXPECT_EQ(WireBytes(1000, 1.0), 1000u);
  EXPECT_EQ(WireBytes(1000, 0.25), 4000u);
  EXPECT_EQ(WireBytes(10, 0.92), 11u);  // 10.87, rounded up
  EXPECT_THROW(WireBytes(10, 0), std::invalid_argument);
}

// One DGX H100 (8 GPUs, NVLink 450 GB/s each way, 2 channels). Ring all-reduce: LL 6.6 + 14 x
// 0.6 = 15.0 us at min(87.7, 450 / 4) x 8 / 14 = 50.1 GB/s; LL128 14 + 14 x 1.9 = 40.6 us at
// min(0.92 x 450, 2 x 36.7) x 8 / 14 = 41.9 GB/s; Simple 8.4 + 14 x 3.4 = 56.0 us at 450 x 8 / 14
// = 257 GB/s. The trees are slower at every size here (Simple's 2 x 7 x 28 us alone, LL's 15.2
// us at under 11 GB/s). So: LL to 1 MiB (35.9 us against Simple's 60.1), Simple from 4 MiB
// (72.3 us against LL's 98.7).
TEST(NcclTuner, OnOneServerLlCarriesSmallAllReducesAndSimpleLargeOnes) {
  NcclTuningInputs dgx;
  dgx.ranks = 8;
  dgx.nodes = 1;
  dgx.channels = 2;
  dgx.intra_bytes_per_s = 450e9;
  dgx.inter_bytes_per_s = 50e9;
  const std::vector<Algorithm> both = {Algorithm::kRing, Algorithm::kTree};
  const std::vector<Protocol> all = {Protocol::kLl, Protocol::kLl128, Protocol::kSimple};
  for (uint64_t bytes : {uint64_t{8}, uint64_t{1} << 20}) {
    SCOPED_TRACE(bytes);
    const NcclChoice choice = NcclFastest(CollectiveOp::kAllReduce, bytes, dgx, both, all);
    EXPECT_EQ(choice.algorithm, Algorithm::kRing);
    EXPECT_EQ(choice.protocol, Protocol::kLl);
  }
  for (uint64_t bytes : {uint64_t{4} << 20, uint64_t{1} << 30}) {
    SCOPED_TRACE(bytes);
    const NcclChoice choice = NcclFastest(CollectiveOp::kAllReduce, bytes, dgx, both, all);
    EXPECT_EQ(choice.algorithm, Algorithm::kRing);
    EXPECT_EQ(choice.protocol, Protocol::kSimple);
  }
  EXPECT_NEAR(NcclMicros(CollectiveOp::kAllReduce, Algorithm::kRing, Protocol::kLl, 8, dgx),
              15.0 + 8 / (1000 * 87.7 * 8 / 14), 1e-9);
  EXPECT_NEAR(
      NcclMicros(CollectiveOp::kAllReduce, Algorithm::kRing, Protocol::kLl128, 1 << 20, dgx),
      40.6 + 1048576 / (1000 * 73.4 * 8 / 14), 1e-9);
}

// 16 servers of 8 GPUs, 400 Gb/s NICs (50 GB/s), 8 channels. Tree LL: 6.8 + 2 x (7 x 0.6 + 4 x
// 5.0) = 55.2 us, the shortest latency by far (the ring LL's is 6.6 + 222 x 1.0 + 32 x 2.7 =
// 315 us): it carries an 8-byte all-reduce. At 1 GiB the ring Simple's 50 x 128 / 254 = 25.2
// GB/s beats the tree's 0.92 x 50 x 0.5 = 23.0 and LL128's 0.92 x 0.92 x 50 x 128 / 254 = 23.2.
TEST(NcclTuner, AcrossServersTheTreeTakesSmallAllReducesAndTheRingLargeOnes) {
  NcclTuningInputs cluster;
  cluster.ranks = 128;
  cluster.nodes = 16;
  cluster.channels = 8;
  cluster.intra_bytes_per_s = 450e9;
  cluster.inter_bytes_per_s = 50e9;
  const std::vector<Algorithm> both = {Algorithm::kRing, Algorithm::kTree};
  const std::vector<Protocol> all = {Protocol::kLl, Protocol::kLl128, Protocol::kSimple};
  const NcclChoice small = NcclFastest(CollectiveOp::kAllReduce, 8, cluster, both, all);
  EXPECT_EQ(small.algorithm, Algorithm::kTree);
  EXPECT_EQ(small.protocol, Protocol::kLl);
  const NcclChoice large =
      NcclFastest(CollectiveOp::kAllReduce, uint64_t{1} << 30, cluster, both, all);
  EXPECT_EQ(large.algorithm, Algorithm::kRing);
  EXPECT_EQ(large.protocol, Protocol::kSimple);
}

// The protocol a spec carries: fixed by the settings, or NCCL's choice with auto; all-to-alls LL
// up to 16 KiB a peer. The ideal protocol leaves the algorithm's choice as it was (Simple's).
TEST(NcclTuner, SpecsCarryTheSettingsProtocol) {
  CollectiveSettings settings;
  settings.ranks_per_server = 8;
  settings.nic_bps = 400'000'000'000;
  settings.protocol = ProtocolChoice::kLl128;
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kAllGather, 1 << 20, 2, 16, 8).protocol,
            Protocol::kLl128);
  settings.protocol = ProtocolChoice::kIdeal;
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kAllGather, 1 << 20, 2, 16, 8).protocol,
            Protocol::kIdeal);
  settings.protocol = ProtocolChoice::kAuto;
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kAllToAll, 16 * 16384, 2, 16, 8).protocol,
            Protocol::kLl);
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kAllToAll, 16 * 16386, 2, 16, 8).protocol,
            Protocol::kSimple);
  settings.all_reduce = AlgorithmChoice::kAuto;
  const CollectiveSpec tiny = SpecFromSettings(settings, CollectiveOp::kAllReduce, 8, 4, 16, 8);
  EXPECT_EQ(tiny.protocol, Protocol::kLl);
}

}  // namespace
}  // namespace nbox::coll
