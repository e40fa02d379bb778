// A DDP job on a star: its iteration time must respect bounds derived without the simulator.
// Compute per iteration is (1 + backward ratio) * FLOPs * batch / (peak * utilisation); the
// gradient all-reduces cannot beat the ring's bandwidth term at the links' TCP goodput, and
// cannot take longer than running them with no overlap at all.
#include <gtest/gtest.h>

#include "tests/cosim/job_fixture.h"
#include "workloads/ddp.h"

namespace nbox::testing {
namespace {

work::DdpConfig SmallResNet() {
  work::DdpConfig config;
  config.model = *work::FindModelPreset("resnet50");
  config.batch_per_rank = 16;
  config.iterations = 2;
  return config;
}

double ComputeSeconds(const work::DdpConfig& c) {
  return (1 + c.backward_to_forward) * c.model.forward_flops_per_sample * c.batch_per_rank /
         (c.compute.peak_flops * c.compute.utilization);
}

// Ring all-reduce bandwidth term for all gradients of one iteration at TCP goodput.
double GradientRingSeconds(const work::DdpConfig& c, int world, double rate_bps, uint32_t mtu) {
  const double goodput = rate_bps / 8 * (mtu - 52.0) / (mtu + 2.0);
  const double bytes = static_cast<double>(c.model.parameters) * c.model.gradient_bytes_per_param;
  return 2.0 * (world - 1) / world * bytes / goodput;
}

// 4 ranks on a star of `rate_bps` links, jumbo frames, 2 channels of 1 MiB chunks.
StarJob StarOf(double rate_bps) {
  StarJob setup;
  setup.rate_bps = rate_bps;
  setup.network.mtu = 9000;
  setup.channels = 2;
  setup.chunk_bytes = 1 << 20;
  return setup;
}

TEST(DdpJob, FastNetworkHidesAlmostAllCommunication) {
  const StarJob setup = StarOf(1e12);  // 1 Tb/s: communication is a small part of compute
  const auto config = SmallResNet();
  const auto outcome = RunOnStar(setup, work::MakeDdpProgram(config));
  ASSERT_TRUE(outcome.finished);
  const double compute = ComputeSeconds(config);
  for (const auto& it : outcome.summary.iterations) {
    // Each of the 150 compute ops is rounded to ns-3's 1 ns time resolution.
    EXPECT_NEAR(it.compute_s, compute, 150e-9);
    EXPECT_GE(it.time_s, compute);
    EXPECT_LT(it.exposed_comm_s, 0.05 * compute) << "iteration " << it.index;
  }
}

TEST(DdpJob, SlowNetworkIterationLiesBetweenOverlapAndNoOverlapBounds) {
  const StarJob setup = StarOf(10e9);  // 10 Gb/s: communication dominates
  const auto config = SmallResNet();
  const auto outcome = RunOnStar(setup, work::MakeDdpProgram(config));
  ASSERT_TRUE(outcome.finished);
  const double compute = ComputeSeconds(config);
  const double comm = GradientRingSeconds(config, setup.world, setup.rate_bps, 9000);
  const auto& steady = outcome.summary.iterations.back();
  EXPECT_GE(steady.time_s, std::max(compute, comm));
  EXPECT_LE(steady.time_s, (compute + comm) * 1.05);
  EXPECT_GT(steady.exposed_comm_s, 0.5 * (comm - compute));
  // Each bucket's all-reduce reports nccl-tests bandwidths consistent with its duration.
  for (const auto& c : outcome.summary.collectives) {
    EXPECT_NEAR(c.algbw_bytes_per_s * c.run_s, static_cast<double>(c.bytes), c.bytes * 1e-9);
    EXPECT_NEAR(c.run_s, c.end_s - c.all_started_s, 1e-15);
    EXPECT_LE(c.run_s, c.time_s);
    EXPECT_NEAR(c.busbw_bytes_per_s, c.algbw_bytes_per_s * 2 * 3 / 4.0, c.busbw_bytes_per_s * 1e-9);
  }
}

}  // namespace
}  // namespace nbox::testing
