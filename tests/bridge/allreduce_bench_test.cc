// The example program bridge/examples/allreduce_bench.c runs as documented: with --launch, and
// as separately started ranks that meet through NBOX_UNIQUE_ID_FILE. It checks its own result
// (every element must equal 1 + 2 + ... + W) and exits non-zero otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_command.h"

namespace {

using nbox::test_support::CommandResult;
using nbox::test_support::RunCommand;

const std::string kEnv =
    std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH + " NBOX_TCP_IFADDR=127.0.0.1 ";

TEST(AllreduceBench, LaunchesRanksAndReportsBusBandwidth) {
  const CommandResult run = RunCommand(kEnv + "timeout 60 " NBOX_ALLREDUCE_BENCH_PATH
                                              " --launch 3 --bytes 1MiB --iters 4");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("RESULT ranks=3 bytes=1048576 iters=4 "), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("busbw_GBps="), std::string::npos) << run.output;
}

// --print-starts: every rank prints when it called each timed all-reduce (CLOCK_MONOTONIC, us),
// so the times increase, by at least the 20 ms of timed wait each iteration holds.
TEST(AllreduceBench, PrintStartsGivesEveryRanksCallTimes) {
  const CommandResult run =
      RunCommand(kEnv + "timeout 60 " NBOX_ALLREDUCE_BENCH_PATH
                        " --launch 3 --bytes 64KiB --iters 4 --warmup 1 --compute-us 20000"
                        " --print-starts");
  ASSERT_EQ(run.status, 0) << run.output;
  std::map<int, std::vector<double>> starts;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag;
    int rank = -1;
    if (!(words >> tag >> rank) || tag != "STARTS_US") continue;
    for (double t; words >> t;) starts[rank].push_back(t);
  }
  ASSERT_EQ(starts.size(), 3u) << run.output;
  for (const auto& [rank, times] : starts) {
    ASSERT_EQ(times.size(), 4u) << "rank " << rank << "\n" << run.output;
    for (size_t i = 1; i < times.size(); ++i) {
      EXPECT_GE(times[i] - times[i - 1], 20000.0) << "rank " << rank << " iteration " << i;
    }
  }
}

TEST(AllreduceBench, RanksMeetThroughAnIdFile) {
  char directory[] = "/tmp/nbox_bench_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string id_file = std::string(directory) + "/id";
  const std::string common = kEnv + "NBOX_WORLD_SIZE=2 NBOX_UNIQUE_ID_FILE=" + id_file +
                             " timeout 60 " NBOX_ALLREDUCE_BENCH_PATH " --bytes 64KiB --iters 3";
  const CommandResult run = RunCommand("NBOX_RANK=1 " + common + " & other=$!; NBOX_RANK=0 " +
                                       common + "; first=$?; wait $other; exit $((first | $?))");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("RESULT ranks=2 bytes=65536 iters=3 "), std::string::npos)
      << run.output;
  unlink(id_file.c_str());
  rmdir(directory);
}

}  // namespace
