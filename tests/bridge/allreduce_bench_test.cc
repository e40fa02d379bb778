// The example program bridge/examples/allreduce_bench.c runs as documented: with --launch, and
// as separately started ranks that meet through NBOX_UNIQUE_ID_FILE. It checks its own result
// (every element must equal 1 + 2 + ... + W) and exits non-zero otherwise.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

// Runs `command` with sh, returns its stdout; *status gets the exit status.
std::string RunShell(const std::string& command, int* status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

const std::string kEnv =
    std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH + " NBOX_TCP_IFADDR=127.0.0.1 ";

TEST(AllreduceBench, LaunchesRanksAndReportsBusBandwidth) {
  int status = -1;
  const std::string output = RunShell(
      kEnv + "timeout 60 " NBOX_ALLREDUCE_BENCH_PATH " --launch 3 --bytes 1MiB --iters 4", &status);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("RESULT ranks=3 bytes=1048576 iters=4 "), std::string::npos) << output;
  EXPECT_NE(output.find("busbw_GBps="), std::string::npos) << output;
}

TEST(AllreduceBench, RanksMeetThroughAnIdFile) {
  char directory[] = "/tmp/nbox_bench_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string id_file = std::string(directory) + "/id";
  const std::string common = kEnv + "NBOX_WORLD_SIZE=2 NBOX_UNIQUE_ID_FILE=" + id_file +
                             " timeout 60 " NBOX_ALLREDUCE_BENCH_PATH " --bytes 64KiB --iters 3";
  int status = -1;
  const std::string output = RunShell("NBOX_RANK=1 " + common + " & other=$!; NBOX_RANK=0 " +
                                          common + "; first=$?; wait $other; exit $((first | $?))",
                                      &status);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("RESULT ranks=2 bytes=65536 iters=3 "), std::string::npos) << output;
  unlink(id_file.c_str());
  rmdir(directory);
}

}  // namespace
