// The network models as plugins (tools/cosim/network_models.h): the network.model key offers
// exactly the registered models, each complete, and each names itself in the report and keeps
// its own settings out of the others' results.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tools/cosim/network_models.h"
#include "tools/scenario/key_schema.h"

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
    EXPECT_NE(model.connection_bytes, nullptr);
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

}  // namespace
}  // namespace nbox::testing
