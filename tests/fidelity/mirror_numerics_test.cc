// Mirror mode's numerics end to end (no root needed): nbox_mlp_train as rank 0 of 2 under
// nbox-cosim, the other rank emulated (peers = mirror, payload = self), must take exactly the
// training step that one rank alone takes on rank 0's samples.
//
// Why exactly: with payload = self the emulated peer sends what it would if it held rank 0's
// data, so every sum of the all-reduce is x + x = 2x (exact in float), and the gradient that
// comes back is 2 * g / 16 where rank 0 alone with a batch of 8 computes g / 8 over the same 8
// samples (global batch 16 = its 8 samples 0..7 at step 0): the same floats, since scaling by a
// power of two is exact. With payload = zeros, or without the peer's share, it would be g / 16.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/fidelity/cosim_run.h"
#include "tests/fidelity/fidelity_support.h"

namespace nbox::fidelity {
namespace {

const std::string kModel = std::string(NBOX_MLP_TRAIN_PATH) +
                           " --layers 32,64,64,8 --steps 1 --warmup 0 --bucket-size 4KiB"
                           " --print-weights";

// rank 0's weight checksum after step 0, and its step-0 loss, from a run's output.
std::string StepZero(const std::string& output) {
  std::smatch weights, loss;
  const bool found =
      std::regex_search(output, weights, std::regex(R"(WEIGHTS rank=0 step=0 fnv1a=(\w+))")) &&
      std::regex_search(output, loss, std::regex(R"(step 0 loss (\S+))"));
  return found ? "weights " + weights[1].str() + ", loss " + loss[1].str() : "";
}

TEST(MirrorNumerics, OneRealRankWithAnEmulatedMirrorStepsAsOneRankAlone) {
  CosimJob job;
  job.world = 2;
  job.host_link = "100Gbps";
  job.launch = kModel + " --global-batch 16";
  const CosimRun cosim = RunCosimJob(job);
  ASSERT_EQ(cosim.status, 0) << cosim.output << "\nrank 0:\n" << cosim.rank0_log;

  const CommandResult alone = RunCommand(std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH +
                                         " NBOX_TCP_IFADDR=127.0.0.1 timeout 60 " + kModel +
                                         " --launch 1 --global-batch 8");
  ASSERT_EQ(alone.status, 0) << alone.output;

  const std::string expected = StepZero(alone.output);
  ASSERT_FALSE(expected.empty()) << alone.output;
  EXPECT_EQ(StepZero(cosim.rank0_log), expected) << cosim.rank0_log;
}

}  // namespace
}  // namespace nbox::fidelity
