// The event scheduler of nbox-cosim runs (tools/cosim/assembly/event_scheduler.h): by default the
// pruning scheduler, which gives the same results as ns-3's MapScheduler with TCP's dead timers
// swept out; a scheduler named in NS_GLOBAL_VALUE is used, and a wrong name is refused.
#include "tools/cosim/assembly/event_scheduler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

class EventScheduler : public CliTest {
 protected:
  EventScheduler() : CliTest("nbox-scheduler") {}

  // nbox-cosim on the event-cost benchmark's job at 8 ranks (TCP, 8 MiB ring all-reduce),
  // with NS_GLOBAL_VALUE set to `global_values` when not empty.
  Outcome Run(const std::string& global_values, const std::string& out) {
    const std::string env = global_values.empty() ? "" : "NS_GLOBAL_VALUE='" + global_values + "' ";
    return nbox::test_support::RunCommand(env + NBOX_COSIM_PATH +
                                          " tools/bench/ring-star-8mib.ini --out " +
                                          (dir_ / out).string() + " 2>&1");
  }

  uint64_t Events(const std::string& out) {
    return ReadJson(dir_ / out / "perf.json").at("events").get<uint64_t>();
  }
};

TEST(SchedulerTypeIn, FindsTheSchedulerAmongNs3sGlobalValues) {
  EXPECT_EQ(nbox::cosim::SchedulerTypeIn(""), "");
  EXPECT_EQ(nbox::cosim::SchedulerTypeIn("RngRun=3"), "");
  EXPECT_EQ(nbox::cosim::SchedulerTypeIn("SchedulerType=ns3::HeapScheduler"), "ns3::HeapScheduler");
  EXPECT_EQ(
      nbox::cosim::SchedulerTypeIn("RngRun=3;SchedulerType=ns3::MapScheduler;ChecksumEnabled=0"),
      "ns3::MapScheduler");
  EXPECT_EQ(nbox::cosim::SchedulerTypeIn("SchedulerType=a;SchedulerType=b"), "b");
}

TEST_F(EventScheduler, SweepingDeadTimersKeepsTheResultsAndDispatchesFewerEvents) {
  const auto pruning = Run("", "pruning");
  const auto map = Run("SchedulerType=ns3::MapScheduler", "map");
  ASSERT_EQ(pruning.status, 0) << pruning.output;
  ASSERT_EQ(map.status, 0) << map.output;
  // Everything but the event count is the same (results.json holds no wall-clock value).
  nlohmann::json swept = ReadJson(dir_ / "pruning" / "results.json");
  nlohmann::json kept = ReadJson(dir_ / "map" / "results.json");
  EXPECT_EQ(swept.at("simulation").at("simulated_s"), kept.at("simulation").at("simulated_s"));
  swept.at("simulation").erase("events");
  kept.at("simulation").erase("events");
  EXPECT_TRUE(swept == kept) << "results.json differ beyond the event count";
  // The map dispatches every cancelled delayed-ACK timer that comes due (200 us after it was
  // set) as an event; the pruning scheduler sweeps most of them out first.
  EXPECT_LT(Events("pruning"), Events("map"));
  // Named explicitly, the pruning scheduler is the default one.
  const auto named = Run("SchedulerType=ns3::NboxPruningScheduler", "named");
  ASSERT_EQ(named.status, 0) << named.output;
  EXPECT_EQ(Events("named"), Events("pruning"));
}

TEST_F(EventScheduler, AnUnknownSchedulerIsRefusedByName) {
  const auto run = Run("SchedulerType=ns3::NoSuchScheduler", "out");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("NS_GLOBAL_VALUE: SchedulerType=ns3::NoSuchScheduler"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // A type that exists but is no scheduler.
  const auto node = Run("SchedulerType=ns3::Node", "node");
  EXPECT_EQ(node.status, 2) << node.output;
  EXPECT_NE(node.output.find("is not an ns-3 event scheduler"), std::string::npos) << node.output;
}

}  // namespace
