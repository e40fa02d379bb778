// [events] at through nbox-cosim: a link's rate and a GPU's speed changed at a moment of the
// run, on every network model, against closed forms and against the same job run with the
// change in place from the start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;
using ::testing::HasSubstr;

class TimedChanges : public CliTest, public ::testing::WithParamInterface<const char*> {
 protected:
  TimedChanges() : CliTest("nbox-timed-changes") {}

  // nccl-tests' ring all-reduce of 16 MiB on 4 hosts of a 10 Gb/s star (h0-h3 on sw0), or on
  // `topology_file`'s hosts: one warm-up run and one timed; returns the table's row.
  nlohmann::json Row(const std::string& name, const std::string& changes,
                     const std::string& topology_file = "") {
    const fs::path out = dir_ / name;
    const std::string topology =
        topology_file.empty() ? " --set topology.kind=star --set topology.host_link=10Gbps"
                              : " --set topology.kind=file --set topology.file=" + topology_file;
    const auto run = RunCosim(
        "scenarios/nccl-tests-h100.ini --set job.world_size=4 --set collectives.protocol=ideal "
        "--set workload.min_bytes=16MiB --set workload.max_bytes=16MiB --set "
        "output.progress=off --set network.model=" +
        std::string(GetParam()) + topology + changes + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    if (run.status != 0) return nlohmann::json::object();
    return ReadJson(out / "results.json").at("nccl_tests").at(0);
  }
  double BusBandwidth(const std::string& name, const std::string& changes) {
    const nlohmann::json row = Row(name, changes);
    return row.contains("busbw_GBps") ? row.at("busbw_GBps").get<double>() : 0;
  }
};

constexpr const char* kDegradeH0 = " --set 'events.at=0s link h0 sw0 rate 5Gbps'";

// Whether the run's packets are RoCE's, whose switches and NICs keep what they derived from a
// port's rate when it was built (the ECN thresholds and PFC headroom of the switch's buffer
// profile, the congestion control's line rate): a changed link runs as a link built at its new
// rate would only within a few percent there.
bool Roce(const char* model) {
  return std::string(model).find("roce") != std::string::npos;
}
bool Packet(const char* model) {
  return std::string(model).rfind("packet", 0) == 0;
}

// A link set to 5 Gb/s at the start runs the job as a link built at 5 Gb/s does (a topology
// file of the same star with host 0's link at 5 Gb/s), bit for bit, on every model but RoCE's
// packets (within 5%); and on the analytical and flow models it halves the ring's bus
// bandwidth, the rate of its slowest lane (the two lanes through host 0 carry 2(W-1)/W of the
// buffer each at 5 Gb/s; the latencies are some 0.1% of the 20 ms all-reduce). The packet
// model's TCP loses more than half there (its flows into host 0 overrun the switch's port:
// losses and recovery).
TEST_P(TimedChanges, ALinkChangedAtTheStartIsALinkBuiltAtThatRate) {
  fs::create_directories(dir_);
  const fs::path slow = dir_ / "slow.topo";
  std::ofstream(slow) << "host h0..h3\nswitch sw0\nlink h0 sw0 5Gbps 1us\n"
                         "link h1..h3 sw0 10Gbps 1us\n";
  const nlohmann::json degraded = Row("degraded", kDegradeH0);
  const nlohmann::json built = Row("built", "", slow.string());
  if (Roce(GetParam())) {
    EXPECT_NEAR(degraded.at("time_us").get<double>() / built.at("time_us").get<double>(), 1, 0.05);
  } else {
    EXPECT_EQ(degraded, built);
  }
  if (!Packet(GetParam())) {
    EXPECT_NEAR(degraded.at("busbw_GBps").get<double>() / BusBandwidth("base", ""), 0.5, 0.005);
  }
}

// A change acts from its time on: the link degraded 1 ms into the 20 ms warm-up and restored
// 1 ms later leaves the timed run as it was; degraded for good 1 ms in, the timed run is the
// one degraded from the start. On the analytical model a collective keeps the time it was
// given when it started, so the warm-up itself is untouched there.
TEST_P(TimedChanges, ALinkChangeActsFromItsTimeOn) {
  const double base = BusBandwidth("base", "");
  const double degraded = BusBandwidth("degraded", kDegradeH0);
  const double restored = BusBandwidth(
      "restored",
      " --set 'events.at=1ms link h0 sw0 rate 5Gbps' --set 'events.at=2ms link sw0 h0 rate "
      "10Gbps'");
  const double later = BusBandwidth("later", " --set 'events.at=1ms link h0 sw0 rate 5Gbps'");
  // Packets: TCP's or DCQCN's state when the change comes moves the timed run a little.
  const double tolerance = Roce(GetParam()) ? 0.05 : Packet(GetParam()) ? 0.02 : 1e-9;
  EXPECT_NEAR(restored / base, 1, tolerance);
  EXPECT_NEAR(later / degraded, 1, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Models, TimedChanges,
                         ::testing::Values("analytical", "flow", "packet",
                                           "packet --set network.transport=roce"));

class TimedGpuChanges : public CliTest {
 protected:
  TimedGpuChanges() : CliTest("nbox-timed-gpu") {}

  nlohmann::json Iterations(const std::string& name, const std::string& settings) {
    const fs::path out = dir_ / name;
    const auto run = RunCosim("tests/cosim/fixtures/tiny.ini --set network.model=flow" + settings +
                              " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    if (run.status != 0) return nlohmann::json::array();
    return ReadJson(out / "results.json").at("iterations");
  }
};

// A straggler from a moment on: rank 2 of tiny.ini's DDP job (on the flow model) 1.3 times slower
// from the start is the job with events.slow_gpus = 2 and slowdown 1.3, bit for bit; from the end
// of iteration 0 on (iteration 1's start in the run without it), iteration 0 is the unslowed job's
// and iteration 1's compute the straggler's.
TEST_F(TimedGpuChanges, AGpuSlowdownActsOnTheComputeThatStartsAfterIt) {
  const nlohmann::json base = Iterations("base", "");
  const nlohmann::json slow =
      Iterations("slow", " --set events.slow_gpus=2 --set events.slowdown=1.3");
  EXPECT_EQ(Iterations("from-start", " --set 'events.at=0s gpu 2 slowdown 1.3'"), slow);
  ASSERT_EQ(base.size(), 2u);
  const double second = base.at(1).at("start_s").get<double>();
  const nlohmann::json later = Iterations(
      "later", " --set 'events.at=" + std::to_string(second * 1e9) + "ns gpu 2 slowdown 1.3'");
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later.at(0), base.at(0));
  EXPECT_EQ(later.at(1).at("compute_s"), slow.at(1).at("compute_s"));
  EXPECT_GT(later.at(1).at("time_s").get<double>(), base.at(1).at("time_s").get<double>());
  // Back to its own speed from the same moment on: the job without a straggler.
  EXPECT_EQ(Iterations("back", " --set 'events.at=0s gpu 2 slowdown 1.3' --set 'events.at=" +
                                   std::to_string(second * 1e9) + "ns gpu 2 slowdown 1'")
                .at(1)
                .at("compute_s"),
            base.at(1).at("compute_s"));
}

// Changes given as several `at` lines of the file are all kept, in order, and the settings
// report writes them as one value that reads back the same.
TEST_F(TimedGpuChanges, SeveralChangesInTheFileAreEachKept) {
  fs::create_directories(dir_);
  const fs::path scenario = dir_ / "changes.ini";
  std::ofstream(scenario) << ReadFile("tests/cosim/fixtures/tiny.ini")
                          << "\n[events]\nat = 0s gpu 1,2 slowdown 1.3\nat = 1ms link h3 sw0 rate "
                             "50Gbps\n";
  const auto run =
      RunCosim(scenario.string() + " --set network.model=flow --out " + (dir_ / "out").string());
  ASSERT_EQ(run.status, 0) << run.output;
  const nlohmann::json results = ReadJson(dir_ / "out" / "results.json");
  const std::string text = "0s gpu 1,2 slowdown 1.3; 1ms link h3 sw0 rate 50Gbps";
  EXPECT_EQ(results.at("scenario").at("settings").at("events.at"), text);
  EXPECT_EQ(Iterations("again", " --set 'events.at=" + text + "'"), results.at("iterations"));
}

// Mistakes name the change and what is wrong, before any work (exit status 2).
TEST_F(TimedGpuChanges, MistakesAreNamed) {
  const std::string tiny = "tests/cosim/fixtures/tiny.ini --check --set ";
  const std::pair<std::string, std::string> mistakes[] = {
      {tiny + "'events.at=1s link h0 sw9 rate 5Gbps'",
       "has no node named 'sw9'; did you mean 'sw0'?"},
      {tiny + "'events.at=1s link h0 h1 rate 5Gbps'", "no link joins 'h0' and 'h1'"},
      {tiny + "'events.at=1s gpu 9 slowdown 2'", "names rank 9, but job.world_size = 4"},
      {tiny + "'events.at=1s gpu 0 slowdown 0.5'",
       "expected TIME gpu RANKS slowdown X (X from 1 to 100"},
      {"scenarios/realranks.ini --check --set 'events.at=1s gpu 0 slowdown 2'",
       "a real rank computes on its own GPU"},
  };
  for (const auto& [args, why] : mistakes) {
    const auto run = RunCosim(args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr(why)) << args;
  }
}

}  // namespace
