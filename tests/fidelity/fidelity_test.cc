// Fidelity against a real network (issue 3, part 6). The ground truth is the job with all W
// ranks real, each in its own network namespace behind a Linux bridge with HTB-shaped host
// links (netns_job.sh), over the plain TCP plugin. It is first checked against the alpha-beta
// closed form (the shaping works: a ring all-reduce cannot beat the link, and a bandwidth-bound
// one should not be far from it). Then the same job runs under nbox-cosim with rank 0 real and
// the W - 1 others emulated (mirror mode) on a simulated star of the same rate and MTU; rank
// 0's iteration time on its virtual clock must be within 5% of the ground truth's. Both numbers
// are printed. Needs root: skipped with the reason otherwise.
//
// Sizes are chosen for CI (2 cores): 200 Mb/s host links, MTU 9000, 8 MiB all-reduces. At
// 500 Mb/s eight ranks on two busy cores ran 4-24% over the closed form (CPU, not the links,
// set the time); at 200 Mb/s 2%, run after run.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/fidelity/cosim_run.h"
#include "tests/fidelity/fidelity_support.h"

namespace nbox::fidelity {
namespace {

constexpr const char* kRate = "200mbit";
constexpr double kRateBps = 200e6;
constexpr int kMtu = 9000;
constexpr double kBenchBytes = 8 * 1024 * 1024;
constexpr double kComputeUs = 20000;
const std::string kBenchArguments = std::string(NBOX_ALLREDUCE_BENCH_PATH) +
                                    " --bytes 8MiB --iters 5 --warmup 2 --compute-us 20000";
// About 1.6 M parameters: 6.3 MB of gradient, 250 ms at 200 Mb/s; 8 samples per rank take about
// 10 ms of forward and backward when a core is free. The compute is real on both sides, but the
// two set-ups load the 2 cores differently (two ranks computing at once, or one rank next to
// nbox-cosim): with 32 samples per rank that alone moved the comparison by 5% on a busy machine,
// so the compute is kept small against the network. One bucket: the gradient is all-reduced
// after backward. (With several buckets the all-reduces overlap backward, which the host
// runtime cannot yet express to nbox-cosim's clock: its thread promises "blocked" while the
// application still computes and may start the next bucket, and nbox-cosim stops with "posted
// before a time it had promised".)
const std::string kTrainArguments = std::string(NBOX_MLP_TRAIN_PATH) +
                                    " --layers 256,1024,1024,256 --global-batch 16 --steps 7"
                                    " --warmup 2 --bucket-size 64MiB --lr 0.01";
constexpr const char* kCosimLink = "200Mbps";
constexpr double kFidelityTolerance = 0.05;

// The median timed iteration of a run (its RESULT line's median_iter_us): on this project's
// shared 2-core machines a single iteration now and then takes 30% longer on either side (the
// CPU was busy), which moves a mean of five by several percent but not the median.
double IterationUs(const std::string& output) {
  const auto fields = ResultFields(output);
  const auto it = fields.find("median_iter_us");
  return it == fields.end() ? -1 : std::stod(it->second);
}

// Rank 0 real, the others emulated by nbox-cosim; returns rank 0's iteration time (virtual).
double CosimIterationUs(int world, const std::string& launch) {
  CosimJob job;
  job.world = world;
  job.host_link = kCosimLink;
  job.mtu = kMtu;
  job.launch = launch;
  const CosimRun run = RunCosimJob(job);
  EXPECT_EQ(run.status, 0) << run.output << "\nrank 0:\n"
                           << run.rank0_log << "\nscenario:\n"
                           << run.scenario;
  const double us = IterationUs(run.rank0_log);
  EXPECT_GT(us, 0) << run.output << "\nrank 0:\n" << run.rank0_log;
  return us;
}

class BenchFidelity : public testing::TestWithParam<int> {};

TEST_P(BenchFidelity, NamespacesMatchAlphaBetaAndNboxCosimMatchesNamespaces) {
  const int world = GetParam();
  const CommandResult run = RunNetnsJob(world, kRate, kMtu, kBenchArguments);
  if (run.status == 77) GTEST_SKIP() << run.output;
  ASSERT_EQ(run.status, 0) << run.output;
  const double measured_us = IterationUs(run.output);
  ASSERT_GT(measured_us, 0) << run.output;
  const double ideal_us =
      kComputeUs + 1e6 * RingAllReduceSeconds(world, kBenchBytes, kRateBps, kMtu);
  std::printf(
      "fidelity: all-reduce bench, W=%d, 8 MiB, 200 Mb/s: namespaces %.0f us per "
      "iteration, alpha-beta %.0f us (ratio %.3f)\n",
      world, measured_us, ideal_us, measured_us / ideal_us);
  // Faster than the links allow would mean the shaping is not in the path; much slower, that
  // something other than the links (CPU, a stall) sets the time.
  EXPECT_GE(measured_us, 0.99 * ideal_us) << run.output;
  EXPECT_LE(measured_us, 1.10 * ideal_us) << run.output;

  // Emulated peers send rank 0 its own data (payload = self): the sum is W * 1.
  const double cosim_us = CosimIterationUs(world, kBenchArguments + " --check self");
  std::printf(
      "fidelity: all-reduce bench, W=%d: namespaces %.0f us, nbox-cosim (1 real + %d "
      "emulated) %.0f us per iteration (%+.1f%%)\n",
      world, measured_us, world - 1, cosim_us, 100.0 * (cosim_us / measured_us - 1));
  EXPECT_NEAR(cosim_us, measured_us, kFidelityTolerance * measured_us);
}

INSTANTIATE_TEST_SUITE_P(Worlds, BenchFidelity, testing::Values(2, 4, 8),
                         [](const testing::TestParamInfo<int>& info) {
                           return "W" + std::to_string(info.param);
                         });

TEST(TrainFidelity, TwoRanksInNamespacesAndUnderNboxCosim) {
  const CommandResult run = RunNetnsJob(2, kRate, kMtu, kTrainArguments);
  if (run.status == 77) GTEST_SKIP() << run.output;
  ASSERT_EQ(run.status, 0) << run.output;
  const auto fields = ResultFields(run.output);
  ASSERT_EQ(fields.count("params"), 1u) << run.output;
  const double measured_us = IterationUs(run.output);
  // The gradient (and the loss) all-reduced every step, all buckets one after another on the
  // communicator: the iteration cannot be shorter than that over the link.
  const double gradient_bytes = 4.0 * (std::stod(fields.at("params")) + 1);
  const double communication_us = 1e6 * RingAllReduceSeconds(2, gradient_bytes, kRateBps, kMtu);
  std::printf(
      "fidelity: MLP training, W=2, %s parameters, 200 Mb/s: namespaces %.0f us per "
      "iteration (gradient all-reduce alone %.0f us)\n",
      fields.at("params").c_str(), measured_us, communication_us);
  EXPECT_GE(measured_us, 0.99 * communication_us) << run.output;
  EXPECT_LT(std::stod(fields.at("last_loss")), std::stod(fields.at("first_loss"))) << run.output;

  const double cosim_us = CosimIterationUs(2, kTrainArguments);
  std::printf(
      "fidelity: MLP training, W=2: namespaces %.0f us, nbox-cosim (1 real + 1 "
      "emulated) %.0f us per iteration (%+.1f%%)\n",
      measured_us, cosim_us, 100.0 * (cosim_us / measured_us - 1));
  EXPECT_NEAR(cosim_us, measured_us, kFidelityTolerance * measured_us);
}

}  // namespace
}  // namespace nbox::fidelity
