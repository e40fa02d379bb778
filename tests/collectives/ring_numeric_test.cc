// Ring schedules compute the collective: run on real buffers by the reference executor in
// random interleavings and compared with a serial computation.
#include <gtest/gtest.h>

#include <cstdint>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::AllOps;
using testing::CheckRun;
using testing::Spec;

template <typename T>
class CollectivesRingNumeric : public ::testing::Test {};

using ElementTypes = ::testing::Types<float, double, int32_t>;
TYPED_TEST_SUITE(CollectivesRingNumeric, ElementTypes);

// Every W in 1..9 and 1..4 channels, sizes that divide and that do not, with and without
// chunking, a few interleavings each.
TYPED_TEST(CollectivesRingNumeric, MatchesSerialReference) {
  using T = TypeParam;
  constexpr uint64_t kElement = sizeof(T);
  int runs = 0;
  for (int world = 1; world <= 9; ++world) {
    for (int channels = 1; channels <= 4; ++channels) {
      const uint64_t even = 3 * world * channels;
      for (uint64_t elements : {uint64_t{1}, uint64_t{13}, even, 5 * even + 7}) {
        for (uint64_t chunk : {uint64_t{0}, 2 * kElement}) {
          for (CollectiveOp op : AllOps()) {
            const Schedule schedule =
                BuildSchedule(Spec(op, world, elements * kElement, channels, chunk, kElement));
            for (uint64_t seed = 0; seed < 3; ++seed) {
              ASSERT_EQ(CheckRun<T>(schedule, seed, elements + world), "");
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 9 * 4 * 4 * 2 * 3 * 3);
}

// Deeply pipelined rings (one element per chunk) under many interleavings.
TEST(CollectivesRingNumericSeeds, ManySeedsOnPipelinedRings) {
  for (CollectiveOp op : AllOps()) {
    for (int world : {2, 3, 4, 7}) {
      for (int channels : {1, 3}) {
        const uint64_t elements = 4 * world * channels + 5;
        const Schedule schedule = BuildSchedule(Spec(op, world, elements * 8, channels, 8, 8));
        for (uint64_t seed = 0; seed < 150; ++seed) {
          ASSERT_EQ(testing::CheckRun<double>(schedule, seed, seed), "");
        }
      }
    }
  }
}

}  // namespace
}  // namespace nbox::coll
