// --set overrides: applied after the file, with the same checks and errors naming them.
#include <gtest/gtest.h>

#include "scenario_test_support.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using testing::LoadError;

TEST(Overrides, ReplaceFileValuesAndDefaults) {
  const Scenario s =
      LoadScenario(Fixture("full.ini"), {"network.mtu=1500", "job.seed = 7", "output.trace=none"});
  EXPECT_EQ(s.network.mtu, 1500u);
  EXPECT_EQ(s.job.seed, 7u);
  EXPECT_EQ(s.output.trace, scenario::Timeline::kNone);
  EXPECT_EQ(s.settings.at("network.mtu"), "1500");
  EXPECT_EQ(s.network.tcp_cc, "dctcp");  // untouched file value
}

TEST(Overrides, ValueMayContainEqualsSigns) {
  const Scenario s = LoadScenario(Fixture("empty.ini"), {"output.dir=runs/a=b"});
  EXPECT_EQ(s.output.dir, "runs/a=b");
}

TEST(Overrides, BadValueNamesTheOverride) {
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"network.mtu=abc"}),
            "--set network.mtu=abc: [network] mtu = 'abc': expected a whole number of bytes "
            "from 576 to 9216");
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"network.tcp_cc=dctpc"}),
            "--set network.tcp_cc=dctpc: [network] tcp_cc = 'dctpc': expected one of newreno, "
            "cubic, dctcp, bbr; did you mean 'dctcp'?");
}

// collectives.channels takes auto (kept as 0, resolved per communicator) or 1..32, never 0.
TEST(Overrides, ChannelsTakeAutoOrACount) {
  EXPECT_EQ(LoadScenario(Fixture("empty.ini"), {"collectives.channels=auto"}).collectives.channels,
            0);
  EXPECT_EQ(LoadScenario(Fixture("empty.ini"), {"collectives.channels=8"}).collectives.channels, 8);
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"collectives.channels=0"}),
            "--set collectives.channels=0: [collectives] channels = '0': expected auto or a whole "
            "number from 1 to 32");
}

TEST(Overrides, UnknownSectionOrKeySuggestsTheNearest) {
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"netwrok.mtu=9000"}),
            "--set netwrok.mtu=9000: unknown section [netwrok]; did you mean [network]?");
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"network.mtuu=9000"}),
            "--set network.mtuu=9000: unknown key 'mtuu' in [network]; did you mean 'mtu'?");
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"topology.mtu=9000"}),
            "--set topology.mtu=9000: unknown key 'mtu' in [topology]; 'mtu' belongs in "
            "[network]");
}

TEST(Overrides, MalformedOverride) {
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"mtu=9000"}),
            "--set mtu=9000: expected section.key=value, such as --set network.mtu=9000");
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"network.mtu"}),
            "--set network.mtu: expected section.key=value, such as --set network.mtu=9000");
}

TEST(Overrides, SameKeyTwiceIsAnError) {
  EXPECT_EQ(LoadError(Fixture("empty.ini"), {"network.mtu=9000", "network.mtu=1500"}),
            "--set network.mtu=1500: network.mtu is already set by --set network.mtu=9000");
}

TEST(Overrides, FileErrorsComeFirstThenOverrideErrors) {
  EXPECT_EQ(LoadError(Fixture("bad_value.ini"), {"job.world_size=0"}),
            "tests/scenario/fixtures/bad_value.ini:4: [network] mtu = 'abc': expected a whole "
            "number of bytes from 576 to 9216\n"
            "--set job.world_size=0: [job] world_size = '0': expected a whole number from 1 to "
            "65536");
}

TEST(Overrides, CanRepairAFileThatBreaksARule) {
  EXPECT_NE(LoadError(Fixture("dctcp_without_ecn.ini")), "");
  const Scenario s = LoadScenario(Fixture("dctcp_without_ecn.ini"), {"network.ecn=on"});
  EXPECT_TRUE(s.network.ecn);
}

}  // namespace
}  // namespace nbox::scenario
