// The host runtime with real processes: W ranks fork/exec'd as host_worker, talking over
// 127.0.0.1 through libnccl-net-nboxtcp.so loaded by the runtime with dlopen. Each worker
// checks its results against the serial reference of reference_values.h; this test checks
// that every rank passed, and times the failure cases.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/bridge/rank_launcher.h"
#include "workloads/collective_trace.h"

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
  options.args = {"700001"};  // more than the 1 MiB chunk of a collective, in one message
  ExpectAllPassed(LaunchRanks("p2p", GetParam(), options));
}

TEST_P(HostRuntimeRanks, AsynchronousCallsAndMixedGroups) {
  ExpectAllPassed(LaunchRanks("async", GetParam()));
}

TEST_P(HostRuntimeRanks, SplitByColorAndKeyThenSplitAgain) {
  ExpectAllPassed(LaunchRanks("split", GetParam()));
}

TEST_P(HostRuntimeRanks, APipelinesTransfersForwardAndBackward) {
  LaunchOptions options;
  options.args = {"300001"};
  ExpectAllPassed(LaunchRanks("pipe", GetParam(), options));
}

TEST_P(HostRuntimeRanks, GroupsNamedByTheirMembersOnlyTheMembersCall) {
  ExpectAllPassed(LaunchRanks("group", GetParam()));
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
      "alltoall=hierarchical protocol=auto nic_bps=100000000000 scaleup_bps=3600000000000"};
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
void ExpectSurvivorsDetect(const std::string& mode, int world, int victim, double limit_s,
                           const std::string& scenario = "die") {
  LaunchOptions options;
  options.args = {std::to_string(victim), mode};
  options.deadline = std::chrono::seconds(30);
  const std::vector<RankOutcome> outcomes = LaunchRanks(scenario, world, options);
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

// NBOX_PROFILE_TRACE: the runtime writes the NCCL profiler's trace format, which the replay
// reads back. The worker's "record" scenario calls, on 3 ranks: AllReduce of 1000 float32,
// AllToAll, AllGather of 10 int32 per rank, ReduceScatter of 7 float16 per rank, Broadcast of
// 5 float64 from rank 2, Reduce of 9 int8 to rank 1, a send/recv ring, AllReduce again.
TEST(HostRuntimeRecording, WritesTheProfilersTraceOfEveryCollective) {
  const std::filesystem::path trace = std::filesystem::temp_directory_path() /
                                      ("nbox-host-record-" + std::to_string(getpid()) + ".jsonl");
  std::filesystem::remove(trace);
  LaunchOptions options;
  options.env = {"NBOX_PROFILE_TRACE=" + trace.string()};
  ExpectAllPassed(LaunchRanks("record", 3, options));

  // NCCL's fields, as its profiler writes them: counts per rank for AllGather and
  // ReduceScatter, NCCL's type names, a sequence number per func, one communicator.
  std::ifstream in(trace);
  std::string line;
  std::vector<nlohmann::json> rank0;
  std::string comm;
  int lines = 0;
  while (std::getline(in, line)) {
    const nlohmann::json record = nlohmann::json::parse(line);
    ++lines;
    if (comm.empty()) comm = record["comm"];
    EXPECT_EQ(record["comm"], comm);
    EXPECT_LE(record["start_ns"].get<uint64_t>(), record["end_ns"].get<uint64_t>());
    EXPECT_TRUE(record["complete"].get<bool>());
    if (record["rank"] == 0) rank0.push_back(record);
  }
  EXPECT_EQ(lines, 3 * 6) << "all-to-all and point to point are not collectives to NCCL";
  ASSERT_EQ(rank0.size(), 6u);
  EXPECT_EQ(rank0[1]["func"], "AllGather");
  EXPECT_EQ(rank0[1]["count"], 10);
  EXPECT_EQ(rank0[1]["datatype"], "ncclInt32");
  EXPECT_EQ(rank0[2]["func"], "ReduceScatter");
  EXPECT_EQ(rank0[2]["count"], 7);
  EXPECT_EQ(rank0[2]["datatype"], "ncclFloat16");
  EXPECT_EQ(rank0[3]["root"], 2);
  EXPECT_EQ(rank0[5]["seq"], 1) << "the second AllReduce";

  // The replay reads it: every rank's collectives in call order, nbox's sizes, the roots.
  const nbox::work::CollectiveTrace read = nbox::work::ReadCollectiveTrace(trace.string());
  ASSERT_EQ(read.nranks, 3);
  using nbox::coll::CollectiveOp;
  const std::vector<std::pair<CollectiveOp, uint64_t>> expected = {
      {CollectiveOp::kAllReduce, 4000},
      {CollectiveOp::kAllGather, 10 * 4 * 3},
      {CollectiveOp::kReduceScatter, 7 * 2 * 3},
      {CollectiveOp::kBroadcast, 5 * 8},
      {CollectiveOp::kReduce, 9},
      {CollectiveOp::kAllReduce, 4000}};
  for (int r = 0; r < 3; ++r) {
    const auto& collectives = read.ranks[static_cast<size_t>(r)];
    ASSERT_EQ(collectives.size(), expected.size()) << "rank " << r;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(collectives[i].op, expected[i].first) << "rank " << r << " #" << i;
      EXPECT_EQ(collectives[i].bytes, expected[i].second) << "rank " << r << " #" << i;
      if (i > 0) {
        EXPECT_GE(collectives[i].start_ns, collectives[i - 1].end_ns);
      }
    }
    EXPECT_EQ(collectives[3].root, 2);
    EXPECT_EQ(collectives[4].root, 1);
  }
  std::filesystem::remove(trace);
}

// A trace file that cannot be opened fails the rank's init, naming the variable and the file.
TEST(HostRuntimeRecording, AnUnwritableTraceFailsInit) {
  LaunchOptions options;
  options.env = {"NBOX_PROFILE_TRACE=/nonexistent-folder/trace.jsonl"};
  const std::vector<RankOutcome> outcomes = LaunchRanks("record", 2, options);
  for (const RankOutcome& outcome : outcomes) {
    EXPECT_NE(outcome.exit_code, 0);
    EXPECT_NE(outcome.output.find("NBOX_PROFILE_TRACE: cannot open the trace file "
                                  "'/nonexistent-folder/trace.jsonl'"),
              std::string::npos)
        << outcome.output;
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

// nboxCommGetAsyncError sees a dead peer while the program makes no call (the runtime checks
// the bootstrap root every 100 ms): what a watchdog such as the torch backend's polls.
TEST(HostRuntimeFailures, AsyncErrorShowsADeadPeerWithoutACall) {
  ExpectSurvivorsDetect("kill", 3, 1, 0.5, "die_idle");
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
