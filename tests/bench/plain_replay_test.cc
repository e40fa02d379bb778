// The plain BulkSend replay on a hand-written traffic matrix: every byte arrives, one-segment
// writes give full segments except each flow's last (so exactly sum ceil(bytes / MSS) data
// segments leave), and the send buffer caps the data in flight. The calibration starts from
// the target rounded up to whole segments.
#include "tools/bench/plain_replay.h"

#include <gtest/gtest.h>

#include "ns3/config.h"
#include "ns3/simulator.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::bench {
namespace {

constexpr uint32_t kMss = 9000 - 20 - 20 - 12;  // tiny.ini has a 9000-byte MTU

class PlainReplayTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  static void Reset() {
    ns3::Simulator::Destroy();
    ns3::Config::Reset();
  }
  // Four ranks, one per host of a 100 Gb/s star.
  scenario::Scenario scenario_ = scenario::LoadScenario("tests/cosim/fixtures/tiny.ini", {});
  // Sizes chosen so no flow is a whole number of segments.
  cosim::TrafficMatrix matrix_{
      {{0, 1, 0, 0}, 1000000}, {{1, 2, 0, 0}, 123457}, {{2, 3, 0, 1}, 777777}, {{3, 0, 0, 0}, 50000}};
};

TEST_F(PlainReplayTest, DeliversEveryByteInFullSegmentsWithinTheSendBuffer) {
  const ReplayConditions conditions{20 * kMss, kMss};
  const RunFigures f = RunPlainReplay(scenario_, matrix_, conditions);
  EXPECT_EQ(f.payload_bytes, 1000000u + 123457u + 777777u + 50000u);
  // ceil: 111.8 -> 112, 13.8 -> 14, 86.9 -> 87, 5.6 -> 6.
  EXPECT_EQ(f.data_segments, 112u + 14u + 87u + 6u);
  EXPECT_LE(f.max_outstanding_bytes, 20u * kMss);
  EXPECT_GT(f.events, 0u);
  EXPECT_GT(f.simulated_s, 0.0);
}

TEST_F(PlainReplayTest, CalibrationStartsFromTheTargetInWholeSegments) {
  const CalibratedReplay replay =
      RunMatchedReplay(scenario_, matrix_, kMss, kMss, 3.5 * kMss, /*max_runs=*/1);
  ASSERT_EQ(replay.tried_buffers.size(), 1u);
  EXPECT_EQ(replay.tried_buffers[0], 4 * kMss);
  EXPECT_EQ(replay.conditions.send_buffer_bytes, 4 * kMss);
  EXPECT_LE(replay.figures.max_outstanding_bytes, 4u * kMss);
}

TEST_F(PlainReplayTest, RefusesAnEmptySendBuffer) {
  EXPECT_THROW(RunPlainReplay(scenario_, matrix_, ReplayConditions{0, kMss}),
               std::invalid_argument);
}

}  // namespace
}  // namespace nbox::bench
