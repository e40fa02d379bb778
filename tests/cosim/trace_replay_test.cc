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
#include "tools/cosim/assembly.h"
#include "tools/cosim/memory_estimate.h"
#include "tools/cosim/summary.h"
#include "tools/cosim/terminal_report.h"
#include "tools/scenario/scenario.h"

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

namespace nbox::testing {
namespace {

// output.messages = csv counts in the memory estimate before the run. On the fixture (4 ranks,
// two unchunked 16 MiB ring all-reduces per iteration, 2 iterations) the run logs 96 messages:
// every rank sends 2 phases x 3 steps per all-reduce, 4 x 2 x 6 x 2. The estimate is a bound
// computed without building schedules: a phase's W = 4 segments (a rank sends W - 1 of them),
// 4 x 2 x 8 x 2 = 128. Below what it needs, the run is refused naming the log and how to
// shrink it.
TEST(TraceReplayJob, TheMessageLogIsInTheMemoryEstimate) {
  const std::string fixture = "tests/cosim/fixtures/trace_replay.ini";
  {
    const cosim::JobAssembly without = cosim::AssembleJob(scenario::LoadScenario(fixture));
    EXPECT_EQ(without.memory.logged_messages, 0u);
    ns3::Simulator::Destroy();
  }
  const scenario::Scenario s = scenario::LoadScenario(fixture, {"output.messages=csv"});
  const cosim::JobAssembly with = cosim::AssembleJob(s);
  EXPECT_EQ(with.memory.logged_messages, 128u);
  EXPECT_EQ(with.memory.message_bytes, static_cast<uint64_t>(128 * cosim::kBytesPerLoggedMessage));
  ns3::Simulator::Destroy();
  try {
    cosim::MemoryEstimate huge = with.memory;
    huge.logged_messages = 100000000;
    huge.message_bytes = static_cast<uint64_t>(1e8 * cosim::kBytesPerLoggedMessage);
    cosim::RefuseUnlessItFits(huge, uint64_t{1} << 30, s);
    FAIL() << "not refused";
  } catch (const cosim::ResourceRefusal& refusal) {
    const std::string text = refusal.what();
    EXPECT_NE(text.find("for the message log (output.messages): up to 100000000 messages"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Shrink the message log: output.messages = none"), std::string::npos)
        << text;
  }
}

}  // namespace
}  // namespace nbox::testing
