// The room a run sets aside for its files (OutputFolder::Reserve) before it simulates: the
// estimate is never below what nbox-cosim then writes, nor many times above it, and a file
// system without that room stops the run before it starts.
#include "tools/cosim/assembly/output_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

#include "tests/cosim/cosim_cli_support.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/assembly/machine_memory.h"
#include "tools/cosim/assembly/memory_estimate.h"
#include "tools/cosim/scenario/scenario.h"

namespace {

using namespace nbox::cli_testing;

class OutputSize : public CliTest {
 protected:
  OutputSize() : CliTest("nbox-output-size") {}

  // The estimate for `scenario` with `overrides`, and the bytes nbox-cosim then writes.
  void Compare(const std::string& scenario, const std::vector<std::string>& overrides) {
    const auto loaded = nbox::scenario::LoadScenario(scenario, overrides);
    const auto assembly = nbox::cosim::AssembleJob(loaded, nbox::cosim::AvailableMemoryBytes());
    estimate_ = nbox::cosim::EstimateOutputBytes(loaded, assembly);
    std::string args = scenario;
    for (const std::string& set : overrides) args += " --set " + set;
    const auto run = RunCosim(args + " --out " + (dir_ / "run").string());
    ASSERT_EQ(run.status, 0) << run.output;
    written_ = 0;
    for (const auto& entry : fs::directory_iterator(dir_ / "run")) written_ += entry.file_size();
    std::cout << scenario << ": estimate " << estimate_ << " B, written " << written_ << " B\n";
  }

  uint64_t estimate_ = 0;
  uint64_t written_ = 0;
};

// A small DDP job: the fixed part of the estimate (1 MiB) dominates.
TEST_F(OutputSize, ASmallAllReduceJobFitsItsEstimate) {
  Compare("tests/cosim/fixtures/tiny.ini", {});
  EXPECT_GE(estimate_, written_);
  EXPECT_LE(estimate_, written_ + (2u << 20));
}

// A hybrid-parallel job with a Chrome trace: thousands of collective entries and trace events,
// which the per-entry figures must cover without overshooting by more than twice.
TEST_F(OutputSize, AHybridParallelJobWithItsTraceFitsItsEstimate) {
  Compare("scenarios/gpt3-13b-64.ini",
          {"network.model=analytical", "workload.global_batch=8", "output.trace=chrome"});
  EXPECT_GT(written_, 2u << 20) << "too small a job to test the per-entry figures";
  EXPECT_GE(estimate_, written_);
  EXPECT_LE(estimate_, 2 * written_ + (1u << 20));
}

}  // namespace
