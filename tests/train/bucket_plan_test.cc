// Gradient buckets of nbox_mlp_train, checked by hand on a 4 -> 8 -> 8 -> 2 MLP whose layers
// hold 40, 72 and 18 floats (offsets 0, 40, 112; 130 in all, plus one extra float: 131).
#include "bridge/examples/mlp_train/bucket_plan.h"

#include <gtest/gtest.h>

namespace nbox::train {
namespace {

void ExpectBucket(const GradientBucket& b, size_t begin, size_t end, int ready_layer) {
  EXPECT_EQ(b.begin, begin);
  EXPECT_EQ(b.end, end);
  EXPECT_EQ(b.ready_layer, ready_layer);
}

TEST(BucketPlan, OneBucketPerLayerWhenBucketsAreTiny) {
  const auto buckets = PlanBuckets(Mlp({4, 8, 8, 2}), 1, 1);
  ASSERT_EQ(buckets.size(), 3u);
  ExpectBucket(buckets[0], 112, 131, 2);  // the last layer and the extra float go first
  ExpectBucket(buckets[1], 40, 112, 1);
  ExpectBucket(buckets[2], 0, 40, 0);
}

TEST(BucketPlan, LayersJoinUntilTheBucketIsFull) {
  // 100 bytes = 25 floats: the last layer (19 with the extra) is short, so layer 1 joins it.
  const auto buckets = PlanBuckets(Mlp({4, 8, 8, 2}), 100, 1);
  ASSERT_EQ(buckets.size(), 2u);
  ExpectBucket(buckets[0], 40, 131, 1);
  ExpectBucket(buckets[1], 0, 40, 0);
}

TEST(BucketPlan, EverythingInOneBucketWhenItIsLarge) {
  const auto buckets = PlanBuckets(Mlp({4, 8, 8, 2}), 1 << 20, 0);
  ASSERT_EQ(buckets.size(), 1u);
  ExpectBucket(buckets[0], 0, 130, 0);
  EXPECT_THROW(PlanBuckets(Mlp({4, 2}), 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::train
