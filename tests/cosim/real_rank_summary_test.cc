// The terminal report and results.json of runs with real ranks, from result structs built by
// hand: they must say what ran (no DDP model when the emulated ranks mirror a real rank) and
// must not print a compute time nobody measured. A simulated job's workload line keeps its
// format. Expectations are written out by hand from the struct each test builds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cosim/real_ranks/rank_roles.h"
#include "tools/cosim/reports/run_result.h"
#include "tools/cosim/reports/terminal_report.h"

namespace nbox::cosim {
namespace {

// A job of `world` ranks, `real` of them real, `peers` = workload | mirror; three iterations of
// 30, 20 and 22 ms, each with `compute_s` of compute, and five collectives (1, 2, 2 per
// iteration). The model is ResNet-152 with 10 collectives per iteration, as the scenario's
// (unused in mirror mode) DDP workload would have.
RunResult HandMadeRun(int world, std::vector<int> real, const std::string& peers,
                      double compute_s) {
  RunResult r;
  r.scenario.path = "hand.ini";
  r.scenario.job.world_size = world;
  r.scenario.realranks.ranks = std::move(real);
  r.scenario.realranks.peers =
      peers == "mirror" ? scenario::RealRankPeers::kMirror : scenario::RealRankPeers::kWorkload;
  r.scenario.workload.model = "resnet152";
  r.scenario.settings = {{"job.seed", "1"},
                         {"job.world_size", std::to_string(world)},
                         {"workload.kind", "ddp"},
                         {"workload.model", "resnet152"},
                         {"workload.batch_per_rank", "32"}};
  r.model.name = "resnet152";
  r.model.parameters = 60192808;
  r.workload_description = "ddp resnet152 (60.2M parameters), batch 32/rank, 3 iterations";
  r.collectives_per_iteration = 10;
  const double starts[] = {0.0, 0.030, 0.050};
  const double times[] = {0.030, 0.020, 0.022};
  for (int i = 0; i < 3; ++i) {
    IterationSummary it;
    it.index = i;
    it.start_s = starts[i];
    it.end_s = starts[i] + times[i];
    it.time_s = times[i];
    it.compute_s = compute_s;
    it.exposed_comm_s = times[i] - compute_s;
    r.summary.iterations.push_back(it);
  }
  const int iteration_of[] = {0, 1, 1, 2, 2};
  for (int c = 0; c < 5; ++c) {
    CollectiveSummary s;
    s.iteration = iteration_of[c];
    s.label = "AllReduce #" + std::to_string(c);
    s.bytes = 1 << 20;
    s.ranks = world;
    s.start_s = starts[s.iteration];
    s.end_s = s.start_s + 0.010;
    s.time_s = 0.010;
    r.summary.collectives.push_back(s);
  }
  if (!r.scenario.realranks.ranks.empty()) {
    r.real_ranks.present = true;
    r.real_ranks.clock = "virtual";
    r.real_ranks.peers = peers;
    r.real_ranks.payload = "self";
    for (int rank : r.scenario.realranks.ranks) {
      RealRankReport report;
      report.rank = rank;
      report.clock = "virtual";
      report.joined = true;
      r.real_ranks.ranks.push_back(report);
    }
  }
  return r;
}

std::string Report(const RunResult& r) {
  std::ostringstream out;
  PrintSummary(r, PerfFigures{}, {}, out);
  return out.str();
}

// The rows of the iteration table: "iter time compute exposed" split on blanks.
std::vector<std::vector<std::string>> IterationRows(const std::string& report) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(report);
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("exposed comm") != std::string::npos && line.find("iter") != std::string::npos) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!std::regex_match(line, std::regex(" +[0-9]+ .*"))) break;
    // "  1  20.0 ms  -  -": index, then cells of one or two words.
    std::smatch m;
    EXPECT_TRUE(std::regex_match(
        line, m,
        std::regex(" +([0-9]+) +(\\S+(?: [a-z]+)?) +(\\S+(?: [a-z]+)?) +(\\S+(?: [a-z]+)?)")))
        << line;
    rows.push_back({m[1], m[2], m[3], m[4]});
  }
  return rows;
}

TEST(RankRoles, RangesOfRanks) {
  EXPECT_EQ(RankRanges({0}), "0");
  EXPECT_EQ(RankRanges({1, 2, 3, 4, 5, 6, 7}), "1-7");
  EXPECT_EQ(RankRanges({0, 3}), "0, 3");
  EXPECT_EQ(RankRanges({0, 1, 3, 5, 6, 7}), "0-1, 3, 5-7");
  EXPECT_EQ(RankRanges({}), "");
}

TEST(RankRoles, WhoRanWhat) {
  const RankRoles mirror = RolesOf(HandMadeRun(8, {0, 3}, "mirror", 0).scenario);
  EXPECT_EQ(mirror.emulated, (std::vector<int>{1, 2, 4, 5, 6, 7}));
  EXPECT_EQ(mirror.emulated_program, EmulatedProgram::kMirror);
  EXPECT_EQ(mirror.mirrored_rank, 0);
  EXPECT_FALSE(mirror.compute_simulated());
  const RankRoles all_real = RolesOf(HandMadeRun(4, {0, 1, 2, 3}, "mirror", 0).scenario);
  EXPECT_TRUE(all_real.emulated.empty());
  EXPECT_EQ(all_real.emulated_program, EmulatedProgram::kNone);
  EXPECT_FALSE(all_real.compute_simulated());
  const RankRoles workload = RolesOf(HandMadeRun(4, {2}, "workload", 0.01).scenario);
  EXPECT_EQ(workload.emulated, (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(workload.compute_simulated());
  // peers = mirror means nothing without real ranks: a simulated job runs the workload.
  const RankRoles simulated = RolesOf(HandMadeRun(4, {}, "mirror", 0.01).scenario);
  EXPECT_TRUE(simulated.simulated_job());
  EXPECT_EQ(simulated.emulated_program, EmulatedProgram::kWorkload);
}

TEST(RealRankSummary, MirrorRunSaysWhatRanAndPrintsNoCompute) {
  const std::string report = Report(HandMadeRun(8, {0}, "mirror", 0));
  EXPECT_NE(report.find("  workload   emulated ranks 1-7: mirror of real rank 0, 5 collectives "
                        "in 3 marked iterations; real rank 0: its own program\n"),
            std::string::npos)
      << report;
  // No DDP model ran: the scenario's workload must not appear.
  EXPECT_EQ(report.find("resnet152"), std::string::npos) << report;
  EXPECT_EQ(report.find("collectives per iteration"), std::string::npos) << report;
  const auto rows = IterationRows(report);
  ASSERT_EQ(rows.size(), 3u) << report;
  for (const auto& row : rows) {
    EXPECT_EQ(row[2], "-") << report;
    EXPECT_EQ(row[3], "-") << report;
  }
  EXPECT_EQ(rows[1][1], "20.0 ms");  // the marked iteration time is printed
  EXPECT_NE(report.find("  - = not measured: the real ranks' compute is not recorded"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("collectives of iteration 2 on the emulated ranks"), std::string::npos);
}

TEST(RealRankSummary, MirrorRunJsonHasNullsNotZeros) {
  const auto json = nlohmann::json::parse(ResultsJson(HandMadeRun(8, {0}, "mirror", 0)));
  EXPECT_TRUE(json["model"].is_null());
  EXPECT_TRUE(json["collectives_per_iteration"].is_null());
  EXPECT_TRUE(json["steady_exposed_comm_s"].is_null());
  EXPECT_DOUBLE_EQ(json["steady_iteration_time_s"].get<double>(), (0.020 + 0.022) / 2);
  ASSERT_EQ(json["iterations"].size(), 3u);
  for (const auto& it : json["iterations"]) {
    EXPECT_TRUE(it["compute_s"].is_null()) << it;
    EXPECT_TRUE(it["exposed_comm_s"].is_null()) << it;
  }
  EXPECT_DOUBLE_EQ(json["iterations"][2]["time_s"].get<double>(), 0.022);
  EXPECT_EQ(json["real_ranks"]["emulated_ranks"], nlohmann::json({1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(json["real_ranks"]["iteration_compute_from"].is_null());
}

TEST(RealRankSummary, WorkloadRunNamesTheEmulatedRanksWorkloadAndItsCompute) {
  const RunResult run = HandMadeRun(4, {0}, "workload", 0.015);
  const std::string report = Report(run);
  EXPECT_NE(report.find("  workload   emulated ranks 1-3: ddp resnet152 (60.2M parameters), "
                        "batch 32/rank, 3 iterations, 10 collectives per iteration; real rank "
                        "0: its own program\n"),
            std::string::npos)
      << report;
  const auto rows = IterationRows(report);
  ASSERT_EQ(rows.size(), 3u) << report;
  EXPECT_EQ(rows[0][2], "15.0 ms");  // the emulated ranks' compute
  EXPECT_EQ(rows[0][3], "15.0 ms");  // 30 ms - 15 ms
  EXPECT_NE(report.find("  compute: the emulated ranks' (simulated); the real ranks' is not "
                        "measured"),
            std::string::npos)
      << report;
  const auto json = nlohmann::json::parse(ResultsJson(run));
  EXPECT_EQ(json["model"]["name"], "resnet152");
  EXPECT_EQ(json["collectives_per_iteration"], 10);
  EXPECT_DOUBLE_EQ(json["iterations"][1]["compute_s"].get<double>(), 0.015);
  EXPECT_DOUBLE_EQ(json["iterations"][1]["exposed_comm_s"].get<double>(), 0.020 - 0.015);
  EXPECT_EQ(json["real_ranks"]["iteration_compute_from"], "emulated ranks");
}

TEST(RealRankSummary, EveryRankRealHasNoEmulatedWorkload) {
  const RunResult run = HandMadeRun(4, {0, 1, 2, 3}, "workload", 0);
  const std::string report = Report(run);
  EXPECT_NE(report.find("  workload   real ranks 0-3: their own program, 3 marked iterations; "
                        "no rank emulated\n"),
            std::string::npos)
      << report;
  for (const auto& row : IterationRows(report)) EXPECT_EQ(row[2], "-") << report;
  const auto json = nlohmann::json::parse(ResultsJson(run));
  EXPECT_TRUE(json["model"].is_null());
  EXPECT_TRUE(json["iterations"][0]["compute_s"].is_null());
  EXPECT_EQ(json["real_ranks"]["emulated_ranks"], nlohmann::json::array());
}

TEST(RealRankSummary, SimulatedJobKeepsItsWorkloadLineAndCompute) {
  const RunResult run = HandMadeRun(8, {}, "workload", 0.015);
  const std::string report = Report(run);
  EXPECT_NE(report.find("  workload   ddp resnet152 (60.2M parameters), batch 32/rank, 3 "
                        "iterations, 10 collectives per iteration, 8 ranks\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("not measured"), std::string::npos) << report;
  EXPECT_EQ(report.find("emulated"), std::string::npos) << report;
  EXPECT_NE(report.find("\n  collectives of iteration 2 (nccl-tests algbw/busbw)\n"),
            std::string::npos);
  const auto json = nlohmann::json::parse(ResultsJson(run));
  EXPECT_EQ(json["model"]["parameters"], 60192808);
  EXPECT_DOUBLE_EQ(json["steady_exposed_comm_s"].get<double>(),
                   ((0.020 - 0.015) + (0.022 - 0.015)) / 2);
  EXPECT_FALSE(json.contains("real_ranks"));
}

}  // namespace
}  // namespace nbox::cosim
