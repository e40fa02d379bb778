// workload.kind = nccl-tests through nbox-cosim: nccl-tests' table for one DGX H100, against
// the bus bandwidth worked by hand from the preset's NVLink data rate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;
using ::testing::HasSubstr;

// 1 GiB on every rank of one H100 server, the ideal protocol, TCP framing at MTU 9000.
const std::string kSweep =
    "scenarios/nccl-tests-h100.ini --set collectives.protocol=ideal --set network.mtu=9000 "
    "--set workload.min_bytes=512MiB --set workload.max_bytes=1GiB --set workload.warmup=0 "
    "--set output.progress=off";

// NVLink data rate: 18 links of 20.6 GB/s (topologies/README.md, "Presets"); a TCP segment of
// an MTU of 9000 carries 9000 - 52 bytes of data in 9000 + 2 (PPP) on the wire.
constexpr double kBusGBps = 18 * 20.6 * (9000.0 - 52) / 9002;

struct Case {
  const char* model;
  const char* collective;
};

class NcclTestsTable : public CliTest, public ::testing::WithParamInterface<Case> {
 protected:
  NcclTestsTable() : CliTest("nbox-nccl-tests") {}
};

// At 1 GiB every collective moves at the NVLink data rate, as nccl-tests' bus bandwidth is
// defined to show: within 1% (the ring's latencies take 0.1-0.6%).
TEST_P(NcclTestsTable, LargeSizesRunAtTheNvlinkDataRate) {
  const fs::path out = dir_ / "out";
  const auto run =
      RunCosim(kSweep + " --set network.model=" + GetParam().model +
               " --set workload.collective=" + GetParam().collective + " --out " + out.string());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("nccl-tests table"));
  EXPECT_THAT(run.output, HasSubstr("1073741824      268435456"));
  const auto table = ReadJson(out / "results.json").at("nccl_tests");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table.at(1).at("bytes").get<uint64_t>(), 1ull << 30);
  EXPECT_EQ(table.at(1).at("runs").get<int>(), 1);
  EXPECT_NEAR(table.at(1).at("busbw_GBps").get<double>(), kBusGBps, kBusGBps * 0.01);
  // algbw is size over time; the half-size row is no faster.
  EXPECT_NEAR(table.at(1).at("algbw_GBps").get<double>(),
              1.073741824 / (table.at(1).at("time_us").get<double>() * 1e-6), 1e-6);
  EXPECT_LE(table.at(0).at("busbw_GBps").get<double>(),
            table.at(1).at("busbw_GBps").get<double>() * 1.0001);
}

// NCCL's Simple protocol on one DGX A100, 16 to 256 MiB: a step of a channel's ring carries 1
// to 16 chunks of 1 MiB. The analytical model, timing each collective whole, and the flow
// model, moving its chunks, agree within 0.5% at every size (the analytical one had added
// every hop's latency to the busy time, 14% more at 64 MiB, while the chunks hide it).
class NcclTestsModels : public CliTest {
 protected:
  NcclTestsModels() : CliTest("nbox-nccl-models") {}
};

TEST_F(NcclTestsModels, PipelinedRingsTakeTheSameTimeOnTheAnalyticalAndTheFlowModel) {
  const std::string sweep =
      "scenarios/nccl-tests-h100.ini --set servers.preset=a100 --set collectives.protocol=simple "
      "--set workload.min_bytes=16MiB --set workload.max_bytes=256MiB --set workload.warmup=0 "
      "--set output.progress=off --set network.model=";
  const auto analytical = RunCosim(sweep + "analytical --out " + (dir_ / "a").string());
  const auto flow = RunCosim(sweep + "flow --out " + (dir_ / "f").string());
  ASSERT_EQ(analytical.status, 0) << analytical.output;
  ASSERT_EQ(flow.status, 0) << flow.output;
  const auto a = ReadJson(dir_ / "a" / "results.json").at("nccl_tests");
  const auto f = ReadJson(dir_ / "f" / "results.json").at("nccl_tests");
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(f.size(), 5u);
  for (size_t i = 0; i < a.size(); ++i) {
    const double ta = a.at(i).at("time_us").get<double>();
    const double tf = f.at(i).at("time_us").get<double>();
    EXPECT_NEAR(ta / tf, 1.0, 0.005) << a.at(i).at("bytes").get<uint64_t>() << " bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(
    ModelsAndOps, NcclTestsTable,
    ::testing::Values(Case{"analytical", "allreduce"}, Case{"flow", "allreduce"},
                      Case{"analytical", "allgather"}, Case{"flow", "reducescatter"},
                      Case{"analytical", "alltoall"}, Case{"flow", "alltoall"}));

class NcclTestsKeys : public CliTest {
 protected:
  NcclTestsKeys() : CliTest("nbox-nccl-tests-keys") {}
};

// The sweep has no model around it: a model's key is refused, naming it, and so is a sweep
// that ends before it starts.
TEST_F(NcclTestsKeys, RefusesWhatTheSweepDoesNotUse) {
  const auto model_key = RunCosim(kSweep + " --set workload.hidden=4096 --check");
  EXPECT_NE(model_key.status, 0);
  EXPECT_THAT(model_key.output, HasSubstr("workload.hidden = 4096 (--set) is not used by "
                                          "workload.kind = nccl-tests"));
  const auto backwards = RunCosim(
      "scenarios/nccl-tests-h100.ini --set workload.min_bytes=1MiB --set workload.max_bytes=8 "
      "--check");
  EXPECT_NE(backwards.status, 0);
  EXPECT_THAT(backwards.output,
              HasSubstr("workload.max_bytes = 8 (--set): must be >= min_bytes = 1048576"));
  // A sweep whose every size rounds to nothing (an all-gather of less than a float per rank).
  const auto nothing = RunCosim(
      "scenarios/nccl-tests-h100.ini --set workload.collective=allgather --set "
      "workload.min_bytes=8 --set workload.max_bytes=16 --check");
  EXPECT_EQ(nothing.status, 2) << nothing.output;
  EXPECT_THAT(nothing.output, HasSubstr("workload.max_bytes = 16 (--set): must be at least 32 "
                                        "bytes"));
}

}  // namespace
