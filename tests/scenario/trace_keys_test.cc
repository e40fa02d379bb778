// workload.model = trace and workload.trace: the file is required with the model and refused
// without it, resolved from the scenario file's folder, and must exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scenario_test_support.h"

namespace nbox::scenario {
namespace {

using testing::LoadError;

const std::string kEmpty = "tests/scenario/fixtures/empty.ini";

// A scenario file `text` beside an (empty) traces/job.jsonl. The file is named after the test:
// ctest runs the tests of this folder at once, and one shared name let a test read another's.
std::string WriteScenarioWithTrace(const std::string& text) {
  const auto folder = std::filesystem::temp_directory_path() / "nbox-trace-keys-test";
  std::filesystem::create_directories(folder / "traces");
  std::ofstream(folder / "traces" / "job.jsonl") << "";
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string path = (folder / (test + ".ini")).string();
  std::ofstream(path) << text;
  return path;
}

TEST(TraceKeys, DefaultIsNoTrace) {
  const Scenario s = LoadScenario(kEmpty);
  EXPECT_EQ(s.workload.trace, "");
  EXPECT_EQ(s.settings.at("workload.trace"), "");
}

TEST(TraceKeys, TheTraceIsResolvedFromTheScenarioFolder) {
  const std::string path =
      WriteScenarioWithTrace("[workload]\nmodel = trace\ntrace = traces/job.jsonl\n");
  const Scenario s = LoadScenario(path);
  const std::string expected =
      (std::filesystem::path(path).parent_path() / "traces" / "job.jsonl").string();
  EXPECT_EQ(s.workload.model, "trace");
  EXPECT_EQ(s.workload.trace, expected);
  EXPECT_EQ(s.settings.at("workload.trace"), expected);
}

TEST(TraceKeys, ModelTraceNeedsAnExistingFileAndTheFileNeedsTheModel) {
  EXPECT_EQ(LoadError(kEmpty, {"workload.model=trace"}),
            kEmpty + ": workload.model = trace (--set) requires workload.trace");
  EXPECT_EQ(LoadError(kEmpty, {"workload.model=trace", "workload.trace=nope.jsonl"}),
            kEmpty +
                ": workload.trace = nope.jsonl (--set): no such file "
                "'tests/scenario/fixtures/nope.jsonl'");
  const std::string path = WriteScenarioWithTrace("[workload]\ntrace = traces/job.jsonl\n");
  EXPECT_EQ(LoadError(path), path +
                                 ": workload.trace = traces/job.jsonl (line 2) is used only with "
                                 "workload.model = trace, got workload.model = resnet152 "
                                 "(default)");
}

TEST(TraceKeys, TraceScalingIsAChoiceOfTheTraceModel) {
  const std::string path = WriteScenarioWithTrace(
      "[job]\nworld_size = 16\n[workload]\nmodel = trace\ntrace = traces/job.jsonl\n"
      "trace_scaling = fixed-total\n");
  EXPECT_EQ(LoadScenario(path).workload.trace_scaling, work::TraceScaling::kFixedTotal);
  EXPECT_EQ(LoadScenario(kEmpty).workload.trace_scaling, work::TraceScaling::kNone);
  EXPECT_EQ(LoadError(kEmpty, {"workload.trace_scaling=fixed-per-rank"}),
            kEmpty +
                ": workload.trace_scaling = fixed-per-rank (--set) is used only with "
                "workload.model = trace, got workload.model = resnet152 (default)");
  EXPECT_NE(LoadError(kEmpty, {"workload.model=trace", "workload.trace_scaling=weak"})
                .find("trace_scaling = 'weak': expected one of none, fixed-total, fixed-per-rank"),
            std::string::npos);
}

}  // namespace
}  // namespace nbox::scenario
