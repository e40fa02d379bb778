// Launching real ranks (rank_launcher.h), their environment (real_rank_env.h) and the
// report's quantile, against hand-checked outcomes of small shell commands.
#include "tools/cosim/real_ranks/rank_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tools/cosim/real_ranks/real_rank_env.h"
#include "tools/cosim/real_ranks/real_rank_report.h"

namespace nbox::cosim {
namespace {

std::string TempDir() {
  const auto dir = std::filesystem::temp_directory_path() / "nbox-launcher-test";
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RankLauncher, SubstitutesEveryRankPlaceholder) {
  EXPECT_EQ(SubstituteRank("bench --rank {rank} --log r{rank}.txt", 12),
            "bench --rank 12 --log r12.txt");
  EXPECT_EQ(SubstituteRank("no placeholder", 3), "no placeholder");
}

TEST(RankLauncher, DescribesHowAProcessEnded) {
  EXPECT_EQ(DescribeWaitStatus(3 << 8), "exited with status 3");  // W_EXITCODE(3, 0)
  EXPECT_EQ(DescribeWaitStatus(SIGKILL), "killed by signal 9 (Killed)");
}

TEST(RankLauncher, RunsTheCommandWithTheEnvironmentAndKeepsItsOutput) {
  const std::string log = TempDir() + "/rank2.log";
  RankLauncher launcher;
  const pid_t pid =
      launcher.Launch(2, "echo rank {rank} of $NBOX_WORLD_SIZE; echo oops >&2; exit 3",
                      {{"NBOX_WORLD_SIZE", "8"}}, log);
  EXPECT_GT(pid, 0);
  EXPECT_EQ(launcher.pid(2), pid);
  const std::vector<ChildExit> ended = launcher.WaitAll(std::chrono::seconds(10));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].rank, 2);
  EXPECT_EQ(ended[0].pid, pid);
  EXPECT_FALSE(ended[0].success);
  EXPECT_EQ(ended[0].how, "exited with status 3");
  EXPECT_EQ(ReadFile(log), "rank 2 of 8\noops\n");
  EXPECT_FALSE(launcher.running(2));
}

TEST(RankLauncher, ACleanExitIsASuccess) {
  RankLauncher launcher;
  launcher.Launch(0, "true", {}, TempDir() + "/rank0.log");
  const auto ended = launcher.WaitAll(std::chrono::seconds(10));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_TRUE(ended[0].success);
}

TEST(RankLauncher, KillAllEndsTheWholeProcessGroupQuickly) {
  const std::string marker = TempDir() + "/grandchild.pid";
  std::filesystem::remove(marker);
  RankLauncher launcher;
  // The shell starts a grandchild that would outlive a kill of the shell alone.
  launcher.Launch(1, "sleep 30 & echo $! > " + marker + "; wait", {}, TempDir() + "/rank1.log");
  for (int i = 0; i < 200 && ReadFile(marker).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const pid_t grandchild = std::stoi(ReadFile(marker));
  EXPECT_TRUE(launcher.Reap().empty());  // still running
  const auto start = std::chrono::steady_clock::now();
  launcher.KillAll(std::chrono::milliseconds(500));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_FALSE(launcher.any_running());
  // The grandchild got the signal too (it is gone, or a zombie of init).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string text;
    std::getline(stat, text);
    gone = !stat || text.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
}

TEST(RealRankEnvironment, NamesEveryVariableARankNeedsInOrder) {
  BridgeAccess access;
  access.plugin_path = "/b/libnccl-net-nbox.so";
  access.bridge = "unix:/tmp/x/bridge.sock";
  access.secret = "s3cr3t-s3cr3t-s3cr3t";
  access.job_id = "nbox-1";
  access.unique_id = "abc";
  access.world_size = 8;
  access.collectives = "channels=2 chunk=1048576";
  access.clock = "virtual";
  const Environment expected = {
      {"NBOX_NET_PLUGIN", "/b/libnccl-net-nbox.so"},
      {"NBOX_BRIDGE", "unix:/tmp/x/bridge.sock"},
      {"NBOX_SECRET", "s3cr3t-s3cr3t-s3cr3t"},
      {"NBOX_JOB_ID", "nbox-1"},
      {"NBOX_RANK", "3"},
      {"NBOX_WORLD_SIZE", "8"},
      {"NBOX_UNIQUE_ID", "abc"},
      {"NBOX_COLLECTIVES", "channels=2 chunk=1048576"},
      {"NBOX_CLOCK", "virtual"},
  };
  EXPECT_EQ(RankEnvironment(access, 3), expected);
  EXPECT_NE(ManualStartText(access, {3}).find("    export NBOX_RANK=3\n"), std::string::npos);
}

TEST(RealRankEnvironment, SecretsAreFreshHex) {
  const std::string a = RandomHex(32);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, RandomHex(32));
}

TEST(RealRankEnvironment, QuotesForTheShellOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuoted("unix:/tmp/a-b_c/bridge.sock"), "unix:/tmp/a-b_c/bridge.sock");
  EXPECT_EQ(ShellQuoted("a b"), "'a b'");
  EXPECT_EQ(ShellQuoted("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuoted(""), "''");
}

TEST(RealRankReport, SteadyIterationSkipsTheWarmUp) {
  RealRankReport rank;
  EXPECT_EQ(SteadyIterationTime(rank), 0);
  rank.iterations = {{0, 0, 5, 5}, {1, 5, 7, 2}, {2, 7, 11, 4}};
  EXPECT_EQ(SteadyIterationTime(rank), 3);  // (2 + 4) / 2
}

TEST(RealRankReport, TheWorstLagIsTheSimulatorsOrARanksOwnWhicheverIsLarger) {
  RealRanksReport report;
  report.lag.max_s = 300e-6;
  report.ranks.resize(2);
  EXPECT_EQ(WorstLag(report), 300e-6);  // no rank said how late it got its completions
  report.ranks[0].arrival_lag_known = true;
  report.ranks[0].arrival_max_lag_s = 250e-6;
  EXPECT_EQ(WorstLag(report), 300e-6);
  report.ranks[1].arrival_lag_known = true;
  report.ranks[1].arrival_max_lag_s = 420e-6;  // the socket's transit on top
  EXPECT_EQ(WorstLag(report), 420e-6);
}

}  // namespace
}  // namespace nbox::cosim
