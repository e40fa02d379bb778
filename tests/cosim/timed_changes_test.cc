// [events] at through nbox-cosim: a link's rate, a GPU's speed and links or switches that fail
// and come back at moments of the run, against closed forms and against the same job on a
// fabric built as the change leaves it.
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

class LinkFailures : public CliTest, public ::testing::WithParamInterface<const char*> {
 protected:
  LinkFailures() : CliTest("nbox-link-failures") {}

  // nccl-tests' all-to-all of 16 MiB on 8 hosts, 4 under each of 2 leaves, every leaf joined
  // to 4 spines by 2.5 Gb/s links (host links 10 Gb/s), packets sprayed over the spines: the
  // leaves' uplinks bound it (half of each host's blocks cross them: 2 x 16 MiB a leaf over
  // 4 x 2.5 Gb/s). With `topology` given, on that topology instead. Returns the timed run's
  // time in microseconds.
  double TimeUs(const std::string& name, const std::string& changes,
                const std::string& topology = "") {
    const fs::path out = dir_ / name;
    const std::string fabric =
        topology.empty()
            ? " --set topology.kind=leaf-spine --set topology.leaves=2 --set "
              "topology.hosts_per_leaf=4 --set topology.spines=4 --set topology.host_link=10Gbps "
              "--set topology.fabric_link=2.5Gbps"
            : " --set topology.kind=file --set topology.file=" + topology;
    const auto run = RunCosim(
        "scenarios/nccl-tests-h100.ini --set network.routing=spray --set "
        "collectives.protocol=ideal --set workload.collective=alltoall --set "
        "workload.min_bytes=16MiB --set workload.max_bytes=16MiB --set output.progress=off "
        "--set network.model=" +
        std::string(GetParam()) + fabric + changes + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    if (run.status != 0) return 0;
    return ReadJson(out / "results.json").at("nccl_tests").at(0).at("time_us").get<double>();
  }
};

// A failed spine of 4 leaves 3/4 of the leaves' uplinks, and the all-to-all they bound takes
// 4/3 as long (within 0.1%: the latencies). The routes over the other spines are the fabric's
// built without it (a topology file of 3 spines): the same time. Failed 1 ms into the warm-up
// and back 1 ms later, the timed run is as without the failure; failed for good 1 ms in, as
// failed from the start (to the rounding of times taken at other moments of the run).
TEST_P(LinkFailures, AFailedSpineLeavesThreeQuartersOfTheBisection) {
  fs::create_directories(dir_);
  const fs::path three = dir_ / "three-spines.topo";
  std::ofstream(three) << "host h0..h7\nswitch leaf0 leaf1\nswitch spine0..spine2\n"
                          "link h0..h3 leaf0 10Gbps 1us\nlink h4..h7 leaf1 10Gbps 1us\n"
                          "link leaf0..leaf1 spine0..spine2 2.5Gbps 1us\n";
  const double base = TimeUs("base", "");
  const double failed = TimeUs("failed", " --set 'events.at=0s switch spine3 down'");
  EXPECT_NEAR(failed / base, 4.0 / 3, 0.001);
  EXPECT_EQ(TimeUs("built", "", three.string()), failed);
  EXPECT_NEAR(TimeUs("repaired",
                     " --set 'events.at=1ms switch spine3 down' --set "
                     "'events.at=2ms switch spine3 up'"),
              base, 1e-9 * base);
  EXPECT_NEAR(TimeUs("later", " --set 'events.at=1ms switch spine3 down'"), failed, 1e-9 * failed);
  // One of a spine's links, both ways, is a quarter of one leaf's uplinks: the same 4/3.
  EXPECT_NEAR(TimeUs("link", " --set 'events.at=0s link leaf0 spine3 down'") / base, 4.0 / 3,
              0.001);
}

// h0 and h1 joined through switches a and c, with a detour a - d - c one hop longer: the
// routes take a - c until it fails, 1 ms into the warm-up of a 2-rank ring all-reduce, and
// the detour then, which carries the rest (a - c carried only what left before the failure;
// on the analytical model, the warm-up it had timed before).
// The timed run goes over the detour at the same rate: as on a fabric built without a - c,
// within 0.1% (one more hop's latency). TCP packets lose what was on the failed link (drops
// of the port that sent them) and recover it (retransmissions), and Cubic's window, cut by the
// loss, regrows for longer than the run: its timed run is no faster and at most 15% slower.
class Detours : public CliTest, public ::testing::WithParamInterface<const char*> {
 protected:
  Detours() : CliTest("nbox-detours") {}
};

TEST_P(Detours, TrafficGoesOnOverALongerPathWhenTheShortOneFails) {
  fs::create_directories(dir_);
  const std::string nodes = "host h0 h1\nswitch a c d\nlink h0 a 10Gbps 1us\n";
  const std::string rest = "link c h1 10Gbps 1us\nlink a d 10Gbps 1us\nlink d c 10Gbps 1us\n";
  const fs::path both = dir_ / "both.topo";
  const fs::path detour = dir_ / "detour.topo";
  std::ofstream(both) << nodes << "link a c 10Gbps 1us\n" << rest;
  std::ofstream(detour) << nodes << rest;
  const std::string ring =
      "scenarios/nccl-tests-h100.ini --set job.world_size=2 --set collectives.protocol=ideal "
      "--set workload.min_bytes=16MiB --set workload.max_bytes=16MiB --set output.progress=off "
      "--set topology.kind=file --set network.model=" +
      std::string(GetParam());
  const auto run = [&](const std::string& name, const std::string& settings) {
    const fs::path out = dir_ / name;
    const auto outcome = RunCosim(ring + settings + " --out " + out.string());
    EXPECT_EQ(outcome.status, 0) << outcome.output;
    return outcome.status == 0 ? ReadJson(out / "results.json") : nlohmann::json::object();
  };
  const nlohmann::json failed = run(
      "failed", " --set topology.file=" + both.string() + " --set 'events.at=1ms link a c down'");
  const nlohmann::json built = run("built", " --set topology.file=" + detour.string());
  ASSERT_TRUE(failed.contains("nccl_tests") && built.contains("nccl_tests"));
  const double time = failed.at("nccl_tests").at(0).at("time_us").get<double>();
  const double reference = built.at("nccl_tests").at(0).at("time_us").get<double>();
  uint64_t direct = 0;
  uint64_t around = 0;
  for (const nlohmann::json& port : failed.at("network").at("ports")) {
    const std::string from = port.at("from");
    const std::string to = port.at("to");
    if (from == "a" && to == "c") direct = port.at("tx_bytes");
    if (from == "a" && to == "d") around = port.at("tx_bytes");
  }
  EXPECT_GT(direct, 0u);
  if (std::string(GetParam()) == "analytical") {
    EXPECT_EQ(around, direct);  // the warm-up counted on the path it was timed on, the rest not
  } else {
    EXPECT_GT(around, 3 * direct);  // the failure came 1 ms into some 30 ms of sending
  }
  if (std::string(GetParam()) == "packet") {
    EXPECT_GE(time / reference, 0.999);
    EXPECT_LE(time / reference, 1.15);
    EXPECT_GT(failed.at("network").at("retransmissions").get<uint64_t>(), 0u);
    EXPECT_GT(failed.at("network").at("drops").get<uint64_t>(), 0u);  // on the failed link
    EXPECT_EQ(built.at("network").at("retransmissions").get<uint64_t>(), 0u);
  } else {
    EXPECT_NEAR(time / reference, 1, 0.001);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, LinkFailures, ::testing::Values("analytical", "flow"));
INSTANTIATE_TEST_SUITE_P(Models, Detours, ::testing::Values("analytical", "flow", "packet"));

// Failures that would leave the job unable to finish, and the models that do not re-route, are
// refused before any work, naming the change.
TEST(LinkFailureMistakes, AreRefusedNamingTheChange) {
  const std::string leaf_spine =
      "scenarios/nccl-tests-h100.ini --set topology.kind=leaf-spine --check --set ";
  const std::pair<std::string, std::string> mistakes[] = {
      {"network.model=flow --set 'events.at=1s switch leaf0 down'",
       "h0 (rank 0) and h1 (rank 1) are cut off from each other"},
      {"network.model=flow --set 'events.at=1s link h0 leaf0 down' --set 'events.at=2s link h0 "
       "leaf0 up'",
       "h0 (rank 0) and h1 (rank 1) are cut off"},
      {"network.model=flow --set 'events.at=1s switch h0 down'", "'h0' is a host, not a switch"},
      {"network.model=packet --set network.transport=roce --set 'events.at=1s switch spine1 "
       "down'",
       "on RoCE packets (network.transport = roce) the switches and NICs keep the routes"},
      {"network.model=packet --set network.routing=flowlet --set 'events.at=1s switch spine1 "
       "down'",
       "flowlet switching (network.routing = flowlet) keeps each flow"},
  };
  for (const auto& [args, why] : mistakes) {
    const auto run = RunCosim(leaf_spine + args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr(why)) << args;
  }
}

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
