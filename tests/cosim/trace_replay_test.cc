// nbox-cosim's assembly on a scenario with workload.model = trace (tests/cosim/fixtures/
// trace_replay.ini): 4 ranks on a 100 Gb/s star, each launching a 16 MiB all-reduce, waiting
// for it, computing, and launching a second one. The recorded gaps are 1 ms on ranks 0, 1
// and 3 and 3 ms on rank 2, so the second all-reduce cannot finish before rank 2 joins it:
// an iteration takes two ring all-reduces (alpha-beta closed form) plus 3 ms.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "ns3/core-module.h"
#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/reports/summary.h"
#include "tools/cosim/reports/terminal_report.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

TEST(TraceReplayJob, IterationIsTwoAllReducesPlusTheSlowestRanksGap) {
  const scenario::Scenario s = scenario::LoadScenario("tests/cosim/fixtures/trace_replay.ini");
  ASSERT_EQ(s.workload.model, "trace");
  const ScenarioOutcome outcome = RunScenario(s);
  ASSERT_TRUE(outcome.finished);
  const cosim::JobSummary& summary = outcome.summary;
  const cosim::RunResult& result = outcome.result;

  EXPECT_EQ(result.model.name, "trace");
  EXPECT_EQ(result.collectives_per_iteration, 2);
  // The report names the trace instead of a model, parameters and batch it does not have.
  std::ostringstream report;
  cosim::PrintSummary(result, cosim::PerfFigures{}, {}, report);
  EXPECT_NE(report.str().find("  workload   replay of the trace "
                              "tests/cosim/fixtures/trace_replay.jsonl, 2 iterations, 2 "
                              "collectives per iteration, 4 ranks\n"),
            std::string::npos)
      << report.str();
  EXPECT_EQ(report.str().find("parameters"), std::string::npos) << report.str();
  ASSERT_EQ(summary.iterations.size(), 2u);
  // Iteration 0 opens the TCP windows; iteration 1 is the steady state.
  const cosim::IterationSummary& steady = summary.iterations[1];
  EXPECT_NEAR(steady.compute_s, 3e-3, 1e-9);  // the largest per-rank compute: rank 2's gap
  const double all_reduce = AlphaBetaSeconds(4, 16 << 20, 100e9, 1e-6, 9000);
  const double expected = 2 * all_reduce + 3e-3;
  std::printf("trace replay: iteration %.6f s, closed form %.6f s (all-reduce %.6f s)\n",
              steady.time_s, expected, all_reduce);
  EXPECT_NEAR(steady.time_s / expected, 1.0, 0.05);
  // Every rank ran both all-reduces of each iteration under one label.
  int instances = 0;
  for (const cosim::CollectiveSummary& c : summary.collectives) {
    EXPECT_EQ(c.ranks, 4) << c.label;
    EXPECT_EQ(c.bytes, 16u << 20) << c.label;
    ++instances;
  }
  EXPECT_EQ(instances, 4);
}

TEST(TraceReplayJob, ATraceOfAnotherJobSizeIsRefused) {
  const scenario::Scenario s =
      scenario::LoadScenario("tests/cosim/fixtures/trace_replay.ini", {"job.world_size=8"});
  try {
    cosim::AssembleJob(s);
    FAIL() << "no error";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("the trace has 4 ranks but the job has 8"),
              std::string::npos)
        << error.what();
  }
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
}

}  // namespace
}  // namespace nbox::testing
