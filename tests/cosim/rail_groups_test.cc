// Data-parallel groups of a tensor-parallel job keep to their rails (collectives/group_servers.h),
// end to end on the flow model: tests/cosim/fixtures/rail_tp4_16_servers.ini, t = 4 on 16 servers
// of 8 GPUs, a rail fabric of 200 Gb/s NICs. Each data-parallel group holds GPUs i and i + 4 of
// every server; in rank order its ring would leave each server from GPU i + 4 and enter the next
// at GPU i, through a spine shared by per-flow ECMP.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/cosim/job_fixture.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

struct Span {
  double start_s = 1e30;
  double end_s = 0;
  uint64_t bytes = 0;
  int group_size = 0;
};

TEST(RailGroups, EveryDataParallelGroupRunsAtItsNicsRatesAndAsFastAsTheOthers) {
  const ScenarioOutcome outcome =
      RunScenario(scenario::LoadScenario("tests/cosim/fixtures/rail_tp4_16_servers.ini"));
  ASSERT_TRUE(outcome.finished);
  // Each data-parallel collective, per communicator: from its first member's start to its last
  // member's end (as nccl-tests times it).
  std::map<std::tuple<int, std::string, uint32_t>, Span> spans;  // (iteration, label, comm)
  for (const auto& c : outcome.records->collectives) {
    if (c.parallelism != work::Parallelism::kData || c.isTransfers) continue;
    Span& span = spans[{c.iteration, outcome.records->Label(c.labelId), c.comm}];
    span.start_s = std::min(span.start_s, c.started.GetSeconds());
    span.end_s = std::max(span.end_s, c.finished.GetSeconds());
    span.bytes = c.bytes;
    span.group_size = c.groupSize;
  }
  ASSERT_FALSE(spans.empty());
  std::map<std::pair<int, std::string>, std::vector<double>> by_collective;
  for (const auto& [key, span] : spans) {
    const double time_s = span.end_s - span.start_s;
    by_collective[{std::get<0>(key), std::get<1>(key)}].push_back(time_s);
    // A ring all-reduce sends 2 (n - 1) / n of its bytes out of every server its group
    // touches (each channel's ring leaves a server once per step), here over the two NICs of
    // the group's two GPUs there: the two channels' rings run opposite ways, so both NICs send.
    // At 2 x 200 Gb/s (50 GB/s), less the latency of the 2 (n - 1) steps per chunk.
    const int n = span.group_size;
    const double bus_bytes_per_s = span.bytes / time_s * 2.0 * (n - 1) / n;
    if (span.bytes >= (64u << 20)) {
      EXPECT_GT(bus_bytes_per_s, 0.9 * 50e9)
          << std::get<1>(key) << " on communicator " << std::get<2>(key);
    }
  }
  for (const auto& [collective, times] : by_collective) {
    ASSERT_EQ(times.size(), 4u) << collective.second;  // the four data-parallel groups
    const auto [fastest, slowest] = std::minmax_element(times.begin(), times.end());
    EXPECT_LE(*slowest, *fastest * 1.02) << collective.second;
  }
}

}  // namespace
}  // namespace nbox::testing
