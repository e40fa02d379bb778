// The network models as plugins (tools/cosim/network_models.h): the network.model key offers
// exactly the registered models, each complete, and each names itself in the report and keeps
// its own settings out of the others' results.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/scenario/scenario_test_support.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/scenario/key_schema.h"

namespace nbox::testing {
namespace {

TEST(NetworkModelRegistry, TheKeyOffersExactlyTheRegisteredModels) {
  std::vector<std::string> names;
  for (const cosim::NetworkModel& model : cosim::NetworkModels()) {
    SCOPED_TRACE(model.name);
    names.push_back(model.name);
    EXPECT_NE(model.build, nullptr);
    EXPECT_NE(model.memory_cost, nullptr);
    EXPECT_NE(model.route_entries, nullptr);
    EXPECT_NE(model.connection_cost, nullptr);
    EXPECT_NE(model.describe, nullptr);
  }
  EXPECT_EQ(scenario::KeyByFullName("network.model").value.choices, names);
}

TEST(NetworkModelRegistry, EachModelNamesItselfInTheReport) {
  const std::map<std::string, std::string> settings = {{"network.transport", "roce"},
                                                       {"network.mtu", "4096"},
                                                       {"network.tcp_cc", "dctcp"},
                                                       {"network.switch_queue", "1MB"},
                                                       {"network.ecn", "on"},
                                                       {"roce.cc", "dcqcn"},
                                                       {"roce.pfc", "on"},
                                                       {"roce.buffer", "12MB"},
                                                       {"roce.ecn_kmin", "400kB"},
                                                       {"roce.ecn_kmax", "1600kB"},
                                                       {"roce.ecn_pmax", "0.2"}};
  const cosim::SettingText setting = [&](const std::string& key) { return settings.at(key); };
  scenario::Scenario s;
  s.network.model = "flow";
  EXPECT_EQ(cosim::NetworkModelOf(s).describe(setting),
            "flow model (max-min fair rates), roce framing and ECMP, MTU 4096");
  s.network.model = "packet";
  EXPECT_EQ(cosim::NetworkModelOf(s).describe(setting),
            "roce dcqcn, PFC on, MTU 4096, switch buffer 12MB, ECN 400kB..1600kB per 100 Gb/s "
            "of port rate, p 0.2");
  s.network.model = "analytical";
  EXPECT_EQ(cosim::NetworkModelOf(s).own_section, "analytical");
  s.network.model = "wormhole";
  EXPECT_THROW(cosim::NetworkModelOf(s), std::invalid_argument);
}

// What a model cannot run it refuses itself, as the scenario loads (the keys named with their
// origin): flowlets end at pauses between packets, which only the packet model has, and the
// analytical model, timing whole collectives, has no messages to log.
std::string LoadError(const std::vector<std::string>& overrides) {
  return scenario::testing::LoadError("tests/scenario/fixtures/empty.ini", overrides,
                                      {cosim::CheckNetworkModel});
}

TEST(NetworkModelRegistry, EachModelRefusesWhatItCannotRun) {
  const std::string empty = "tests/scenario/fixtures/empty.ini";
  EXPECT_EQ(LoadError({"network.routing=flowlet"}), "");
  EXPECT_EQ(LoadError({"network.routing=flowlet", "network.transport=roce"}), "");
  EXPECT_EQ(LoadError({"network.routing=flowlet", "network.model=flow"}),
            empty +
                ": network.routing = flowlet (--set) needs network.model = packet (flowlets end "
                "at pauses between packets, which the flow model does not have), got "
                "network.model = flow (--set)");
  EXPECT_NE(LoadError({"network.routing=flowlet", "network.model=analytical"}), "");
  EXPECT_EQ(LoadError({"network.routing=spray", "network.model=flow"}), "");
  EXPECT_EQ(LoadError({"output.messages=csv", "network.model=flow"}), "");
  EXPECT_EQ(LoadError({"output.messages=csv", "network.model=analytical"}),
            empty +
                ": output.messages = csv (--set) needs messages, but network.model = analytical "
                "(--set) times whole collectives");
  // TCP runs on the packet model only: its timeout is checked there, not on the others.
  const std::vector<std::string> slow = {"topology.host_link=1Mbps", "network.tcp_min_rto=1ms"};
  EXPECT_NE(LoadError(slow), "");
  std::vector<std::string> flow = slow;
  flow.push_back("network.model=flow");
  EXPECT_EQ(LoadError(flow), "");
  // Loaded without the models' checks, the scenario's own rules let all of them through.
  EXPECT_EQ(scenario::testing::LoadError(empty, {"network.routing=flowlet", "network.model=flow"}),
            "");
}

}  // namespace
}  // namespace nbox::testing
