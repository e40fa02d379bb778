#include "workloads/gradient_buckets.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace nbox::work {
namespace {

// Layers in forward order; buckets are filled from the last layer down.
const std::vector<uint64_t> kLayerBytes = {5, 3, 8, 2, 7};

TEST(AssignGradientBuckets, PyTorchClosesOnceTheCapIsReached) {
  // Caps: first 4, then 10. Walk L4..L0 by hand:
  //   L4=7 >= 4 -> bucket 0 {L4} = 7 (cap now 10)
  //   L3=2, +L2=8 -> 10 >= 10 -> bucket 1 {L3,L2} = 10
  //   L1=3, +L0=5 -> 8 < 10, end -> bucket 2 {L1,L0} = 8
  const auto buckets = AssignGradientBuckets(kLayerBytes, 4, 10, BucketClosing::kAtCap);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].first_ready_layer, 4);
  EXPECT_EQ(buckets[0].last_ready_layer, 4);
  EXPECT_EQ(buckets[0].bytes, 7u);
  EXPECT_EQ(buckets[0].cap, 4u);
  EXPECT_EQ(buckets[1].first_ready_layer, 3);
  EXPECT_EQ(buckets[1].last_ready_layer, 2);
  EXPECT_EQ(buckets[1].bytes, 10u);
  EXPECT_EQ(buckets[1].cap, 10u);
  EXPECT_EQ(buckets[2].first_ready_layer, 1);
  EXPECT_EQ(buckets[2].last_ready_layer, 0);
  EXPECT_EQ(buckets[2].bytes, 8u);
  EXPECT_EQ(buckets[2].cap, 10u);
}

TEST(AssignGradientBuckets, PyTorchBucketMayPassTheCapByItsLastLayer) {
  // Cap 9 everywhere: L4=7, +L3=2 -> 9 closes {L4,L3}; L2=8, +L1=3 -> 11 closes {L2,L1};
  // {L0} = 5 is what is left.
  const auto buckets = AssignGradientBuckets(kLayerBytes, 9, 9, BucketClosing::kAtCap);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].bytes, 9u);
  EXPECT_EQ(buckets[1].first_ready_layer, 2);
  EXPECT_EQ(buckets[1].last_ready_layer, 1);
  EXPECT_EQ(buckets[1].bytes, 11u);
  EXPECT_EQ(buckets[2].first_ready_layer, 0);
  EXPECT_EQ(buckets[2].bytes, 5u);
}

TEST(AssignGradientBuckets, BelowCapNeverPassesTheCapExceptForOneLargeLayer) {
  // Caps: first 4, then 10. L4=7 alone passes 4: its own bucket. L3=2, +L2=8 -> 10 fits;
  // +L1=3 -> 13 would not: close {L3,L2}. L1=3, +L0=5 -> 8 fits; end.
  const auto buckets = AssignGradientBuckets(kLayerBytes, 4, 10, BucketClosing::kBelowCap);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].first_ready_layer, 4);
  EXPECT_EQ(buckets[0].last_ready_layer, 4);
  EXPECT_EQ(buckets[0].bytes, 7u);
  EXPECT_EQ(buckets[1].first_ready_layer, 3);
  EXPECT_EQ(buckets[1].last_ready_layer, 2);
  EXPECT_EQ(buckets[1].bytes, 10u);
  EXPECT_EQ(buckets[2].first_ready_layer, 1);
  EXPECT_EQ(buckets[2].last_ready_layer, 0);
  EXPECT_EQ(buckets[2].bytes, 8u);
}

TEST(AssignGradientBuckets, BelowCapWithCapNine) {
  // Cap 9: {L4,L3} = 9; L2=8, +L1=3 -> 11 > 9: {L2}; L1=3, +L0=5 -> 8: {L1,L0}.
  const auto buckets = AssignGradientBuckets(kLayerBytes, 9, 9, BucketClosing::kBelowCap);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].bytes, 9u);
  EXPECT_EQ(buckets[1].first_ready_layer, 2);
  EXPECT_EQ(buckets[1].last_ready_layer, 2);
  EXPECT_EQ(buckets[1].bytes, 8u);
  EXPECT_EQ(buckets[2].first_ready_layer, 1);
  EXPECT_EQ(buckets[2].last_ready_layer, 0);
  EXPECT_EQ(buckets[2].bytes, 8u);
}

TEST(AssignGradientBuckets, EveryLayerAboveTheCapIsItsOwnBucket) {
  for (BucketClosing closing : {BucketClosing::kAtCap, BucketClosing::kBelowCap}) {
    const auto buckets = AssignGradientBuckets(kLayerBytes, 1, 1, closing);
    ASSERT_EQ(buckets.size(), kLayerBytes.size());
    for (size_t b = 0; b < buckets.size(); ++b) {
      const int layer = static_cast<int>(kLayerBytes.size() - 1 - b);
      EXPECT_EQ(buckets[b].first_ready_layer, layer);
      EXPECT_EQ(buckets[b].last_ready_layer, layer);
      EXPECT_EQ(buckets[b].bytes, kLayerBytes[static_cast<size_t>(layer)]);
    }
  }
}

TEST(AssignGradientBuckets, OneBucketWhenEverythingFitsTheFirstCap) {
  for (BucketClosing closing : {BucketClosing::kAtCap, BucketClosing::kBelowCap}) {
    const auto buckets = AssignGradientBuckets(kLayerBytes, 100, 10, closing);
    ASSERT_EQ(buckets.size(), 1u);
    EXPECT_EQ(buckets[0].first_ready_layer, 4);
    EXPECT_EQ(buckets[0].last_ready_layer, 0);
    EXPECT_EQ(buckets[0].bytes, 25u);
    EXPECT_EQ(buckets[0].cap, 100u);
  }
}

TEST(AssignGradientBuckets, RejectsBadInput) {
  EXPECT_THROW(AssignGradientBuckets({}, 4, 10, BucketClosing::kAtCap), std::invalid_argument);
  EXPECT_THROW(AssignGradientBuckets(kLayerBytes, 0, 10, BucketClosing::kAtCap),
               std::invalid_argument);
  EXPECT_THROW(AssignGradientBuckets(kLayerBytes, 4, 0, BucketClosing::kBelowCap),
               std::invalid_argument);
}

TEST(WithoutEmptyLayers, NarrowsBucketsToTheLayersWithGradients) {
  // Expert gradients of a model whose even layers are MoE: layers 0..5 hold 4, 0, 4, 0, 4, 0.
  // A cap of 8 packs 5..2 (0 + 4 + 0 + 4) and 1..0: the first is issued after layer 2's
  // backward and holds layers 4..2, the second layer 0's alone.
  const std::vector<uint64_t> bytes = {4, 0, 4, 0, 4, 0};
  const auto buckets =
      WithoutEmptyLayers(AssignGradientBuckets(bytes, 8, 8, BucketClosing::kAtCap), bytes);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].first_ready_layer, 4);
  EXPECT_EQ(buckets[0].last_ready_layer, 2);
  EXPECT_EQ(buckets[0].bytes, 8u);
  EXPECT_EQ(buckets[1].first_ready_layer, 0);
  EXPECT_EQ(buckets[1].last_ready_layer, 0);
  // A model with no expert gradients in these layers has no buckets.
  const std::vector<uint64_t> none = {0, 0, 0};
  EXPECT_TRUE(
      WithoutEmptyLayers(AssignGradientBuckets(none, 8, 8, BucketClosing::kAtCap), none).empty());
}

}  // namespace
}  // namespace nbox::work
