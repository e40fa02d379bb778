// A real rank under every collective setting: the host runtime's rank and the emulated peers
// nbox-cosim plays for it derive every message from one description (channels, chunk,
// algorithm, and each call's data type), so a run of every collective of every data type and
// size, down to one element, completes with the real rank's results right.
//
// The real rank is tests/bridge/host_worker.cc's "collectives" scenario: every collective,
// every data type x reduction, sizes from 0 to several chunks, in place and not, checked
// against closed forms of the inputs where every emulated peer holds the real rank's own data
// (payload = self). The run must end with exit status 0, a complete results.json, and as many
// collectives on each emulated rank as the real one reported.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;

struct Settings {
  const char* name;
  std::vector<std::string> sets;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RealRankSettings : public ::testing::TestWithParam<Settings> {};

TEST_P(RealRankSettings, EveryCollectiveOfEveryTypeAndSizeAgrees) {
  const fs::path dir =
      fs::temp_directory_path() /
      ("nbox-realrank-settings-" + std::to_string(getpid()) + "-" + GetParam().name);
  fs::remove_all(dir);
  std::string command = std::string(NBOX_COSIM_PATH) +
                        " tests/cosim/fixtures/realranks_matrix.ini --out " + dir.string() +
                        " --set 'realranks.launch=" + NBOX_HOST_WORKER_PATH +
                        " collectives env self 3000'";
  for (const std::string& set : GetParam().sets) command += " --set " + set;
  const auto run = nbox::test_support::RunCommand(command + " 2>&1");
  const std::string log = ReadFile(dir / "rank1.log");
  EXPECT_EQ(run.status, 0) << run.output << "\nrank 1:\n" << log;
  ASSERT_TRUE(fs::exists(dir / "results.json")) << run.output;
  const auto results = nlohmann::json::parse(ReadFile(dir / "results.json"));
  EXPECT_EQ(results.at("status"), "complete");
  const auto& rank = results.at("real_ranks").at("ranks").at(0);
  const uint64_t reported = rank.at("collectives_reported").get<uint64_t>();
  // host_worker's "collectives": per data type (10) 4 reductions x (all-reduce, reduce-scatter,
  // reduce) + all-gather, broadcast, all-to-all; per size (5) in place and not, five
  // collectives, plus an all-to-all not in place; one more all-reduce.
  EXPECT_EQ(reported, 10u * (4 * 3 + 3) + 5u * (2 * 5 + 1) + 1);
  // The emulated ranks ran each collective the real one reported (the mirror repeats them).
  EXPECT_EQ(results.at("collectives").size(), reported);
  if (!HasFailure()) fs::remove_all(dir);
}

// Channels from 1 to 32 (a one-element call leaves channels empty), chunks of one float64
// element to many, every algorithm of every collective.
INSTANTIATE_TEST_SUITE_P(
    Matrix, RealRankSettings,
    ::testing::Values(
        Settings{"one_channel", {"collectives.channels=1"}}, Settings{"two_channels_default", {}},
        Settings{"three_channels_8B_chunks", {"collectives.channels=3", "collectives.chunk=8B"}},
        Settings{"thirty_two_channels", {"collectives.channels=32", "collectives.chunk=1KiB"}},
        Settings{"trees",
                 {"collectives.allreduce=tree", "collectives.broadcast=tree",
                  "collectives.reduce=tree"}},
        Settings{"direct",
                 {"collectives.allreduce=direct", "collectives.allgather=direct",
                  "collectives.reducescatter=direct"}},
        Settings{
            "halving_doubling",
            {"collectives.allreduce=halving-doubling", "collectives.allgather=halving-doubling",
             "collectives.reducescatter=halving-doubling", "collectives.channels=3"}},
        Settings{"auto", {"collectives.allreduce=auto", "collectives.chunk=64KiB"}},
        Settings{"auto_channels", {"collectives.channels=auto"}}),
    [](const ::testing::TestParamInfo<Settings>& info) { return std::string(info.param.name); });

}  // namespace

namespace {

// A real program that disagrees with its emulated peers (here the worker's int8 all-reduce of
// 333 elements against the default workload's gradient all-reduce) ends the run, not
// nbox-cosim: exit status 1, the output folder written with the rank's log, and an error that
// names the emulated side's message and the real rank's last call.
TEST(RealRankDisagreement, EndsTheRunNamingBothSidesAndKeepsTheLog) {
  const fs::path dir =
      fs::temp_directory_path() / ("nbox-realrank-disagrees-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto run = nbox::test_support::RunCommand(
      std::string(NBOX_COSIM_PATH) + " tests/cosim/fixtures/realranks_matrix.ini --out " +
      dir.string() + " --set realranks.peers=workload --set 'realranks.launch=" +
      NBOX_HOST_WORKER_PATH + " collectives env self 3000' 2>&1");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("the ranks' schedules disagree"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("real rank 1 (pid "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("'s last call: #0, AllReduce of 333 int8 (333 bytes)"),
            std::string::npos)
      << run.output;
  ASSERT_TRUE(fs::exists(dir / "results.json")) << run.output;
  const auto results = nlohmann::json::parse(ReadFile(dir / "results.json"));
  EXPECT_EQ(results.at("status").get<std::string>().rfind("failed", 0), 0u) << results["status"];
  EXPECT_TRUE(fs::exists(dir / "rank1.log"));
  fs::remove_all(dir);
}

// A real rank that splits its communicator is told plainly that its emulated peers do not
// exchange colors and what to call instead (rather than a bootstrap that nbox-cosim never
// answers), and the run ends with the rank's failure.
TEST(RealRankSplit, IsRefusedWithAReasonAndTheCallToUseInstead) {
  const fs::path dir =
      fs::temp_directory_path() / ("nbox-realrank-split-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto run = nbox::test_support::RunCommand(
      std::string(NBOX_COSIM_PATH) + " tests/cosim/fixtures/realranks_matrix.ini --out " +
      dir.string() + " --set 'realranks.launch=" + NBOX_HOST_WORKER_PATH + " split env self' 2>&1");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("real rank 1 (pid "), std::string::npos) << run.output;
  const std::string log = ReadFile(dir / "rank1.log");
  EXPECT_NE(log.find("nboxCommSplit: a real rank of nbox-cosim cannot split its communicator "
                     "(its emulated peers do not exchange colors): name the group's members "
                     "with nboxCommInitGroup"),
            std::string::npos)
      << log;
  fs::remove_all(dir);
}

}  // namespace
