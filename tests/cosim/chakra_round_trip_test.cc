// Export -> import of every shipped workload kind: the workload written as
// Chakra traces and run again as workload.kind = chakra on the same network gives the same
// iteration times, bit for bit, and the same collectives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "tests/cosim/job_fixture.h"
#include "tools/cosim/assembly/workload_registry.h"
#include "tools/cosim/scenario/scenario.h"
#include "workloads/chakra/chakra_export.h"

namespace nbox::testing {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  std::string scenario;
  std::vector<std::string> overrides;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class ChakraRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ChakraRoundTrip, SameIterationTimesBitForBit) {
  const Case& c = GetParam();
  const scenario::Scenario original = scenario::LoadScenario(c.scenario, c.overrides);
  const fs::path dir =
      fs::temp_directory_path() / ("nbox-chakra-" + c.name + "-" + std::to_string(getpid()));
  chakra::WriteChakraTraces(cosim::BuildWorkload(original).programs, dir.string());
  scenario::Scenario imported = original;
  imported.workload = scenario::WorkloadSection{};
  imported.workload.kind = "chakra";
  imported.workload.trace_dir = dir.string();
  imported.workload.iterations = 1;  // the traces once, as LoadScenario makes it for chakra

  const ScenarioOutcome a = RunScenario(original);
  const ScenarioOutcome b = RunScenario(imported);
  fs::remove_all(dir);
  ASSERT_TRUE(a.finished);
  ASSERT_TRUE(b.finished);
  ASSERT_EQ(a.summary.iterations.size(), b.summary.iterations.size());
  ASSERT_FALSE(a.summary.iterations.empty());
  for (size_t i = 0; i < a.summary.iterations.size(); ++i) {
    EXPECT_EQ(a.summary.iterations[i].time_s, b.summary.iterations[i].time_s) << "iteration " << i;
    EXPECT_EQ(a.summary.iterations[i].compute_s, b.summary.iterations[i].compute_s)
        << "iteration " << i;
  }
  EXPECT_EQ(a.summary.collectives.size(), b.summary.collectives.size());
  std::printf("%s: %zu iterations, steady %.9f s both ways\n", c.name.c_str(),
              a.summary.iterations.size(), a.summary.iterations.back().time_s);
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, ChakraRoundTrip,
    ::testing::Values(Case{"ddp", "tests/cosim/fixtures/tiny.ini", {}},
                      Case{"transformer",
                           "tests/cosim/fixtures/models/hybrid_64.ini",
                           {"job.world_size=16", "servers.count=2", "workload.tensor_parallel=2",
                            "workload.pipeline_parallel=2", "workload.global_batch=16",
                            "workload.hidden=256", "workload.ffn=1024", "workload.heads=4",
                            "workload.vocab=4000", "workload.seq_len=128", "network.model=flow"}},
                      Case{"transformer_context_parallel",
                           "tests/cosim/fixtures/models/hybrid_64.ini",
                           {"job.world_size=16", "servers.count=2", "workload.tensor_parallel=2",
                            "workload.context_parallel=2", "workload.pipeline_parallel=2",
                            "workload.global_batch=16", "workload.hidden=256", "workload.ffn=1024",
                            "workload.heads=4", "workload.vocab=4000", "workload.seq_len=128",
                            "network.model=flow"}},
                      Case{"moe", "tests/cosim/fixtures/moe_rail.ini", {"network.model=flow"}},
                      Case{"dlrm", "tests/cosim/fixtures/dlrm_rail.ini", {"network.model=flow"}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nbox::testing
