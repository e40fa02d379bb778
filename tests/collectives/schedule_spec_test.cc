// Spec validation, names, and nccl-tests' bus bandwidth factors.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "collectives/schedule.h"
#include "collectives_test_util.h"

namespace nbox::coll {
namespace {

using testing::Spec;

// Expects BuildSchedule to reject `spec` with a message naming `field`.
void ExpectRejected(const CollectiveSpec& spec, const std::string& field) {
  try {
    BuildSchedule(spec);
    ADD_FAILURE() << "accepted a spec with a bad " << field;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

TEST(CollectivesSpec, RejectsBadFieldsByName) {
  const CollectiveSpec good = Spec(CollectiveOp::kAllReduce, 4, 64, 2, 8);
  EXPECT_NO_THROW(BuildSchedule(good));

  CollectiveSpec spec = good;
  spec.world_size = 0;
  ExpectRejected(spec, "world_size");
  spec.world_size = -3;
  ExpectRejected(spec, "world_size");
  spec.world_size = kMaxWorldSize + 1;
  ExpectRejected(spec, "world_size");

  spec = good;
  spec.channels = 0;
  ExpectRejected(spec, "channels");
  spec.channels = kMaxChannels + 1;
  ExpectRejected(spec, "channels");

  spec = good;
  spec.element_bytes = 0;
  ExpectRejected(spec, "element_bytes");

  spec = good;
  spec.bytes = 66;  // not a multiple of 4
  ExpectRejected(spec, "bytes");

  spec = good;
  spec.chunk_bytes = 3;  // less than one 4-byte element
  ExpectRejected(spec, "chunk_bytes");

  spec = good;
  spec.op = static_cast<CollectiveOp>(17);
  ExpectRejected(spec, "op");

  spec = good;
  spec.algorithm = static_cast<Algorithm>(9);
  ExpectRejected(spec, "algorithm");

  // 1 GiB in 4-byte chunks would be hundreds of millions of steps per rank.
  spec = good;
  spec.bytes = uint64_t{1} << 30;
  spec.chunk_bytes = 4;
  ExpectRejected(spec, "chunk_bytes");
}

TEST(CollectivesSpec, ChunkBytesNeedNotBeAWholeNumberOfElements) {
  // 10 bytes of 4-byte elements: chunks of at most 2 elements.
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllGather, 2, 40, 1, 10));
  for (const RankSchedule& rank : schedule.ranks) {
    ASSERT_EQ(rank.steps.size(), 6u);  // a 5-element segment in 3 chunks, sent and received
    for (const Step& step : rank.steps) EXPECT_LE(step.bytes, 8u);
  }
}

TEST(CollectivesSpec, Names) {
  EXPECT_EQ(ToString(CollectiveOp::kAllReduce), "AllReduce");
  EXPECT_EQ(ToString(CollectiveOp::kAllGather), "AllGather");
  EXPECT_EQ(ToString(CollectiveOp::kReduceScatter), "ReduceScatter");
  EXPECT_EQ(ToString(Algorithm::kRing), "Ring");
}

TEST(CollectivesBusBandwidth, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 8), 1.75);
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(op, 2), 0.5);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(op, 4), 0.75);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(op, 8), 0.875);
  }
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 1), 0.0);
  EXPECT_THROW(BusBandwidthFactor(CollectiveOp::kAllReduce, 0), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::coll
