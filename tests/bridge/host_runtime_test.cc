// The host runtime with real processes: W ranks fork/exec'd as host_worker, talking over
// 127.0.0.1 through libnccl-net-nboxtcp.so loaded by the runtime with dlopen. Each worker
// checks its results against the serial reference of reference_values.h; this test checks
// that every rank passed, and times the failure cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/bridge/rank_launcher.h"

namespace nbox::host::testing {
namespace {

void ExpectAllPassed(const std::vector<RankOutcome>& outcomes) {
  for (const RankOutcome& outcome : outcomes) {
    if (outcome.exit_code != 0) {
      ADD_FAILURE() << Describe(outcomes);
      return;
    }
  }
}

class HostRuntimeRanks : public ::testing::TestWithParam<int> {};

TEST_P(HostRuntimeRanks, EveryCollectiveMatchesTheSerialReference) {
  const int world = GetParam();
  LaunchOptions options;
  options.args = {world >= 8 ? "40000" : "150000"};  // the large count
  ExpectAllPassed(LaunchRanks("collectives", world, options));
}

TEST_P(HostRuntimeRanks, PointToPointInGroupsAndChains) {
  LaunchOptions options;
  options.args = {"700001"};  // several 1 MiB chunks plus a remainder
  ExpectAllPassed(LaunchRanks("p2p", GetParam(), options));
}

TEST_P(HostRuntimeRanks, AsynchronousCallsAndMixedGroups) {
  ExpectAllPassed(LaunchRanks("async", GetParam()));
}

INSTANTIATE_TEST_SUITE_P(World, HostRuntimeRanks, ::testing::Values(2, 3, 4, 8),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

// Many channels and tiny chunks: hundreds of pipelined messages per lane, lanes interleaved.
TEST(HostRuntimeChunking, ThreeChannelsOfFourKiBChunks) {
  LaunchOptions options;
  options.env = {"NBOX_CHANNELS=3", "NBOX_CHUNK_BYTES=4KiB"};
  options.args = {"50000"};
  ExpectAllPassed(LaunchRanks("collectives", 3, options));
}

// The collective settings nbox-cosim sends (NBOX_COLLECTIVES) choose every operation's
// algorithm in the runtime too: on 4 ranks in servers of 2, the hierarchical all-reduce and
// all-to-all, halving-doubling all-gathers, direct reduce-scatters and the trees' broadcast and
// reduce all give the serial reference's results.
TEST(HostRuntimeSettings, EveryOperationOnItsChosenAlgorithm) {
  LaunchOptions options;
  options.env = {
      "NBOX_COLLECTIVES=channels=2 chunk=65536 ranks_per_server=2 allreduce=hierarchical "
      "allgather=halving-doubling reducescatter=direct broadcast=tree reduce=tree "
      "alltoall=hierarchical nic_bps=100000000000 scaleup_bps=3600000000000"};
  options.args = {"50000"};
  ExpectAllPassed(LaunchRanks("collectives", 4, options));
}

int64_t ValueAfter(const std::string& output, const std::string& key) {
  const size_t at = output.find(key + " ");
  if (at == std::string::npos) return -1;
  return std::atoll(output.c_str() + at + key.size() + 1);
}

// A rank dies (or aborts) in the middle of a loop of all-reduces: every other rank must get
// an error — not hang — within a few seconds of the event, ring neighbour or not.
void ExpectSurvivorsDetect(const std::string& mode, int world, int victim, double limit_s) {
  LaunchOptions options;
  options.args = {std::to_string(victim), mode};
  options.deadline = std::chrono::seconds(30);
  const std::vector<RankOutcome> outcomes = LaunchRanks("die", world, options);
  const int64_t event_ns = ValueAfter(outcomes[victim].output, "EVENT_NS");
  ASSERT_GT(event_ns, 0) << Describe(outcomes);
  for (int r = 0; r < world; ++r) {
    if (r == victim) continue;
    ASSERT_EQ(outcomes[r].exit_code, 3) << Describe(outcomes);
    const int64_t detected_ns = ValueAfter(outcomes[r].output, "DETECTED_NS");
    ASSERT_GT(detected_ns, 0) << Describe(outcomes);
    const double seconds = (detected_ns - event_ns) / 1e9;
    EXPECT_LT(seconds, limit_s) << "rank " << r << "\n" << Describe(outcomes);
    std::printf("rank %d learned of rank %d (%s) after %.0f ms\n", r, victim, mode.c_str(),
                seconds * 1e3);
  }
}

TEST(HostRuntimeFailures, KilledRankIsReportedToEverySurvivor) {
  ExpectSurvivorsDetect("kill", 4, 2, 3.0);
}

TEST(HostRuntimeFailures, AbortedCommunicatorIsReportedToEveryOtherRank) {
  // The victim process lives on for 2 s after its abort: learning of it sooner shows the
  // abort itself was reported, not the end of the process.
  ExpectSurvivorsDetect("abort", 4, 0, 1.5);
}

TEST(HostRuntimeFailures, InitFailsWhenARankNeverJoins) {
  LaunchOptions options;
  options.absent_ranks = {1};
  options.env = {"NBOX_BOOTSTRAP_TIMEOUT_S=2"};
  // The root runs in this process and reads its join timeout here.
  setenv("NBOX_BOOTSTRAP_TIMEOUT_S", "2", 1);
  const std::vector<RankOutcome> outcomes = LaunchRanks("join_timeout", 3, options);
  unsetenv("NBOX_BOOTSTRAP_TIMEOUT_S");
  for (int r : {0, 2}) {
    EXPECT_EQ(outcomes[r].exit_code, 3) << Describe(outcomes);
    EXPECT_NE(outcomes[r].output.find("only 2 of 3 ranks joined within 2 s"), std::string::npos)
        << Describe(outcomes);
  }
}

}  // namespace
}  // namespace nbox::host::testing
