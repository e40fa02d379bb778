// The example program bridge/examples/allreduce_bench.c runs as documented: with --launch, and
// as separately started ranks that meet through NBOX_UNIQUE_ID_FILE. It checks its own result
// (every element must equal 1 + 2 + ... + W) and exits non-zero otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

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
