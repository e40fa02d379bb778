// A real rank in group communicators: tests/bridge/host_worker.cc's "group" scenario (an
// all-reduce on the world, then groups named by their members: [0, 2] and [3, 1] with an
// all-gather and an all-reduce each, then the pairs [2, 0] and [1, 3] with one all-reduce) runs
// as real rank 0 of 4 while ranks 1-3 replay what the same program did when all four ran for
// real over the TCP plugin (tests/cosim/fixtures/real_groups.jsonl). The real rank joins each
// group through nbox-cosim's bootstrap root by its members and checks every result against
// closed forms of its own data (payload = self); a group the scenario lacks, and mirrored
// peers for a workload with groups, are refused with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kScenario = "tests/cosim/fixtures/real_groups.ini";

std::string Launch(const std::string& mode) {
  return std::string(" --set 'realranks.launch=") + NBOX_HOST_WORKER_PATH + " group env " + mode +
         "'";
}

class RealRankGroups : public ::testing::TestWithParam<const char*> {};

// Exit status 0, a complete results.json, the real rank's log free of failures, and the seven
// collectives of the recording (one on the world, two on each group of two, one on each pair),
// each with its communicator's size; the real rank reported its four (the world's, its group's
// two, its pair's).
TEST_P(RealRankGroups, ARealRankJoinsItsGroupsByTheirMembers) {
  const fs::path dir =
      fs::temp_directory_path() /
      ("nbox-realrank-groups-" + std::string(GetParam()) + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto run = nbox::test_support::RunCommand(
      std::string(NBOX_COSIM_PATH) + " " + kScenario + " --out " + dir.string() +
      " --set network.model=" + GetParam() + Launch("self") + " 2>&1");
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string log = ReadFile(dir / "rank0.log");
  EXPECT_EQ(log.find("FAIL"), std::string::npos) << log;
  const auto results = nlohmann::json::parse(ReadFile(dir / "results.json"));
  EXPECT_EQ(results.at("status"), "complete");
  const auto& collectives = results.at("collectives");
  ASSERT_EQ(collectives.size(), 7u) << collectives.dump(1);
  int on_world = 0;
  int on_groups = 0;
  for (const auto& c : collectives) {
    (c.at("group") == "world" ? on_world : on_groups) += 1;
    EXPECT_EQ(c.at("ranks"), c.at("group") == "world" ? 4 : 2) << c.dump();
    EXPECT_EQ(c.at("bytes"), 8) << c.dump();  // one int64, or one int32 from each of two
  }
  EXPECT_EQ(on_world, 1);
  EXPECT_EQ(on_groups, 6);
  const auto& rank = results.at("real_ranks").at("ranks").at(0);
  EXPECT_EQ(rank.at("collectives_reported"), 4);
  EXPECT_EQ(rank.at("said_goodbye"), true);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Models, RealRankGroups, ::testing::Values("packet", "flow", "analytical"),
                         [](const auto& info) { return std::string(info.param); });

// The same program against a recording of its world all-reduce alone: the scenario has no group
// [0, 2], and the run ends saying so, with the members.
TEST(RealRankGroupsRefused, AGroupTheScenarioLacksIsNamedByItsMembers) {
  const fs::path dir =
      fs::temp_directory_path() / ("nbox-realrank-nogroup-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ifstream in("tests/cosim/fixtures/real_groups.jsonl");
    std::ofstream out(dir / "world_only.jsonl");
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"nranks\":4") != std::string::npos) out << line << "\n";
    }
  }
  const auto run = nbox::test_support::RunCommand(
      std::string(NBOX_COSIM_PATH) + " " + kScenario + " --out " + (dir / "out").string() +
      " --set workload.trace=" + (dir / "world_only.jsonl").string() + Launch("self") + " 2>&1");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("rank 0 joined a group of world ranks [0,2], but no communicator of "
                            "the scenario's workload has exactly those members"),
            std::string::npos)
      << run.output;
  fs::remove_all(dir);
}

// Mirrored peers repeat the lowest real rank's calls on the world: a workload with groups
// needs peers that run their own programs, and nbox-cosim says so before launching anything.
TEST(RealRankGroupsRefused, MirroredPeersForAWorkloadWithGroups) {
  const auto run = nbox::test_support::RunCommand(std::string(NBOX_COSIM_PATH) + " " + kScenario +
                                                  " --check --set realranks.peers=mirror" +
                                                  Launch("self") + " 2>&1");
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("set realranks.peers = workload"), std::string::npos) << run.output;
}

}  // namespace
