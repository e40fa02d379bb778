// A fleet's spread of GPU speeds and its stragglers ([events]): the factors each rank's compute
// time is multiplied by, against what the keys promise.
#include "tools/cosim/assembly/compute_time_factors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace nbox::cosim {
namespace {

TEST(ComputeTimeFactorsOf, AlikeGpusNeedNoFactors) {
  EXPECT_TRUE(ComputeTimeFactors(scenario::EventsSection{}, 64, 1).empty());
}

// 100,000 GPUs of speed spread 0.05: the speeds (1 / factor) are uniform within 1 +- sqrt(3) x
// 0.05, so their mean is 1 and their standard deviation 0.05 (to the sampling error of 100,000
// draws, well under 1%), and none lies outside that interval.
TEST(ComputeTimeFactorsOf, TheSpreadHasTheStandardDeviationAsked) {
  scenario::EventsSection events;
  events.gpu_variation = 0.05;
  const std::vector<double> factors = ComputeTimeFactors(events, 100000, 7);
  ASSERT_EQ(factors.size(), 100000u);
  double sum = 0, squares = 0;
  const double half_width = std::sqrt(3.0) * 0.05;
  for (double factor : factors) {
    const double speed = 1 / factor;
    EXPECT_GE(speed, 1 - half_width - 1e-12);
    EXPECT_LT(speed, 1 + half_width);
    sum += speed;
    squares += speed * speed;
  }
  const double mean = sum / 100000;
  EXPECT_NEAR(mean, 1.0, 0.001);
  EXPECT_NEAR(std::sqrt(squares / 100000 - mean * mean), 0.05, 0.0005);
}

TEST(ComputeTimeFactorsOf, TheSameSeedGivesTheSameFleet) {
  scenario::EventsSection events;
  events.gpu_variation = 0.02;
  EXPECT_EQ(ComputeTimeFactors(events, 512, 1), ComputeTimeFactors(events, 512, 1));
  EXPECT_NE(ComputeTimeFactors(events, 512, 1), ComputeTimeFactors(events, 512, 2));
  // The first ranks' speeds do not depend on how many ranks follow.
  const std::vector<double> small = ComputeTimeFactors(events, 8, 1);
  const std::vector<double> large = ComputeTimeFactors(events, 512, 1);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), large.begin()));
}

TEST(ComputeTimeFactorsOf, SlowGpusTakeTheSlowdownOnTopOfTheirSpeed) {
  scenario::EventsSection events;
  events.slow_gpus = {3, 5};
  events.slowdown = 1.3;
  const std::vector<double> alone = ComputeTimeFactors(events, 8, 1);
  EXPECT_EQ(alone, (std::vector<double>{1, 1, 1, 1.3, 1, 1.3, 1, 1}));
  events.gpu_variation = 0.02;
  scenario::EventsSection spread_only = events;
  spread_only.slow_gpus.clear();
  spread_only.slowdown = 1;
  const std::vector<double> both = ComputeTimeFactors(events, 8, 1);
  const std::vector<double> spread = ComputeTimeFactors(spread_only, 8, 1);
  for (int rank = 0; rank < 8; ++rank) {
    const bool slow = rank == 3 || rank == 5;
    EXPECT_DOUBLE_EQ(both[rank], spread[rank] * (slow ? 1.3 : 1.0)) << rank;
  }
}

}  // namespace
}  // namespace nbox::cosim
