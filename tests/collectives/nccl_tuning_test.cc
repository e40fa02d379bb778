// collectives.allreduce = auto (nccl_tuning.h) at the boundaries of NCCL 2.20.3's rule,
// worked out by hand from the model's constants.
#include "collectives/nccl_tuning.h"

#include <gtest/gtest.h>

namespace nbox::coll {
namespace {

// 16 ranks, one per node, 2 channels, 100 Gb/s NICs (12.5 GB/s):
//   ring: bandwidth 12.5 x 16 / 30 = 6.667 GB/s; latency 8.4 + (30 - 32) x 3.4 + 32 x 14 =
//     449.6 us, x 1.4 = 629.44 us from 64 x 2 x 16 = 2048 bytes on;
//   tree: bandwidth min(0.92 x 12.5, 2 x 36) x 0.5 = 5.75 GB/s times the correction;
//     latency 2 x (0 + 4 x 28) = 224 us.
// NCCL's all-reduce time with the Simple protocol, and its choice of ring or tree with it (what
// collectives.allreduce = auto takes with collectives.protocol = ideal).
double SimpleMicros(Algorithm algorithm, uint64_t bytes, const NcclTuningInputs& inputs) {
  return NcclMicros(CollectiveOp::kAllReduce, algorithm, Protocol::kSimple, bytes, inputs);
}
Algorithm SimpleChoice(uint64_t bytes, const NcclTuningInputs& inputs) {
  return NcclFastest(CollectiveOp::kAllReduce, bytes, inputs, {Algorithm::kRing, Algorithm::kTree},
                     {Protocol::kSimple})
      .algorithm;
}

NcclTuningInputs SixteenNodes() {
  return NcclTuningInputs{16, 16, 2, 12.5e9, 12.5e9};
}

TEST(NcclTuning, SixteenNodesHandWorkedTimes) {
  // 2.5 MiB: log2(2621440 / 64) = 15, correction 0.6: tree 224 + 2621440 / 3450 = 983.84 us;
  // ring 629.44 + 2621440 / 6666.67 = 1022.66 us.
  EXPECT_NEAR(SimpleMicros(Algorithm::kTree, 5 << 19, SixteenNodes()), 983.84, 0.01);
  EXPECT_NEAR(SimpleMicros(Algorithm::kRing, 5 << 19, SixteenNodes()), 1022.66, 0.01);
  // 1 KiB: below the plateau: ring 449.6 + 1024 / 6666.67 = 449.75 us.
  EXPECT_NEAR(SimpleMicros(Algorithm::kRing, 1024, SixteenNodes()), 449.75, 0.01);
}

// The rule's boundary lies between 2.5 MiB (tree) and 3.5 MiB (ring: tree 224 + 3670016 / 3450
// = 1287.8 us against 629.44 + 550.5 = 1179.9 us).
TEST(NcclTuning, SixteenNodesSwitchFromTreeToRingNearThreeMegabytes) {
  EXPECT_EQ(SimpleChoice(1024, SixteenNodes()), Algorithm::kTree);
  EXPECT_EQ(SimpleChoice(64 << 10, SixteenNodes()), Algorithm::kTree);
  EXPECT_EQ(SimpleChoice(5 << 19, SixteenNodes()), Algorithm::kTree);
  EXPECT_EQ(SimpleChoice(7 << 19, SixteenNodes()), Algorithm::kRing);
  EXPECT_EQ(SimpleChoice(64 << 20, SixteenNodes()), Algorithm::kRing);
}

// One server of 8 GPUs on NVLink (450 GB/s): the ring's 8.4 + 14 x 3.4 = 56 us against the
// tree's 2 x 7 x 28 = 392 us, and the ring's bandwidth (450 x 8 / 14) above the tree's
// (min(414, 77.4) x 0.5): the ring at every size.
TEST(NcclTuning, OneServerAlwaysRunsTheRing) {
  const NcclTuningInputs server{8, 1, 2, 450e9, 50e9};
  for (uint64_t bytes = 64; bytes <= (uint64_t{1} << 30); bytes *= 4) {
    EXPECT_EQ(SimpleChoice(bytes, server), Algorithm::kRing) << bytes << " bytes";
  }
}

TEST(NcclTuning, OnlyRingAndTreeAreModelled) {
  EXPECT_THROW(SimpleMicros(Algorithm::kDirect, 1024, SixteenNodes()), std::invalid_argument);
  EXPECT_EQ(SimpleChoice(1024, NcclTuningInputs{1, 1, 1, 1e9, 1e9}), Algorithm::kRing);
}

}  // namespace
}  // namespace nbox::coll
