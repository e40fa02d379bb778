// Errors in scenario files: each names the file, the line, and the nearest valid name or what
// was expected. Line numbers are counted by hand in the fixtures.
#include <gtest/gtest.h>

#include "scenario_test_support.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using testing::LoadError;

TEST(LoadErrors, UnknownSectionSuggestsTheNearest) {
  EXPECT_EQ(LoadError(Fixture("unknown_section.ini")),
            "tests/scenario/fixtures/unknown_section.ini:4: unknown section [netwrok]; "
            "did you mean [network]?");
}

TEST(LoadErrors, UnknownSectionListsValidSectionsWhenNothingIsClose) {
  // The section is empty and still reported, at its header.
  EXPECT_EQ(LoadError(Fixture("unknown_section_far.ini")),
            "tests/scenario/fixtures/unknown_section_far.ini:2: unknown section [telemetry]; "
            "valid sections are [job], [topology], [network], [roce], [analytical], [collectives], "
            "[workload], [output], [realranks], [events], [debug], [servers], [cluster]");
}

TEST(LoadErrors, UnknownKeySuggestsTheNearest) {
  EXPECT_EQ(LoadError(Fixture("unknown_key.ini")),
            "tests/scenario/fixtures/unknown_key.ini:3: unknown key 'chanels' in "
            "[collectives]; did you mean 'channels'?");
}

TEST(LoadErrors, KeyOfAnotherSectionSaysWhereItBelongs) {
  EXPECT_EQ(LoadError(Fixture("misplaced_key.ini")),
            "tests/scenario/fixtures/misplaced_key.ini:3: unknown key 'mtu' in [topology]; "
            "'mtu' belongs in [network]\n"
            "tests/scenario/fixtures/misplaced_key.ini:4: unknown key 'colour' in [topology]; "
            "valid keys are kind, hosts, leaves, spines, hosts_per_leaf, k, file, host_link, "
            "fabric_link, oversubscription, link_latency");
}

TEST(LoadErrors, BadValueSaysWhatWasExpected) {
  EXPECT_EQ(LoadError(Fixture("bad_value.ini")),
            "tests/scenario/fixtures/bad_value.ini:4: [network] mtu = 'abc': expected a whole "
            "number of bytes from 576 to 9216");
}

// A huge bad value is cut in the message (a 2 MB token was echoed whole).
TEST(LoadErrors, ALongBadValueIsShortened) {
  const std::string value(5000, '9');
  EXPECT_EQ(LoadError("scenarios/default.ini", {"network.mtu=" + value}),
            "--set network.mtu=" + value.substr(0, 48) + "... (5012 bytes): [network] mtu = '" +
                value.substr(0, 40) +
                "... (5000 bytes)': expected a whole number of bytes from 576 to 9216");
}

TEST(LoadErrors, EveryBadValueIsReportedInLineOrder) {
  const std::string f = "tests/scenario/fixtures/bad_values.ini";
  EXPECT_EQ(LoadError(Fixture("bad_values.ini")),
            f + ":2: [job] world_size = '0': expected a whole number from 1 to 65536\n" + f +
                ":4: [topology] host_link = '100GB/s': expected a rate from 1Mbps to 10Tbps, "
                "such as 100Gbps or 25Gb/s\n" +
                f +
                ":5: [topology] link_latency = '5': expected a duration from 1ns to 1s, such "
                "as 1us or 2.5ms\n" +
                f +
                ":7: [network] tcp_cc = 'dctpc': expected one of newreno, cubic, dctcp, bbr; "
                "did you mean 'dctcp'?\n" +
                f +
                ":8: [network] ecn = 'maybe': expected on or off (also true/false, yes/no, "
                "1/0)\n" +
                f +
                ":10: [workload] gpu_util = '0': expected a number greater than 0 and at "
                "most 1");
}

TEST(LoadErrors, DuplicateKeyNamesTheFirstLine) {
  EXPECT_EQ(LoadError(Fixture("duplicate_key.ini")),
            "tests/scenario/fixtures/duplicate_key.ini:6: duplicate key 'mtu' in [network]; "
            "first set on line 2");
}

TEST(LoadErrors, MalformedLine) {
  EXPECT_EQ(LoadError(Fixture("syntax_error.ini")),
            "tests/scenario/fixtures/syntax_error.ini:3: expected [section], key = value or a "
            "comment, got 'this line has no equals sign'");
}

TEST(LoadErrors, KeyBeforeAnySection) {
  EXPECT_EQ(LoadError(Fixture("key_outside_section.ini")),
            "tests/scenario/fixtures/key_outside_section.ini:1: key 'world_size' comes before "
            "any section; it belongs in [job]");
}

TEST(LoadErrors, ValueErrorsHideCrossKeyRules) {
  // bad_value.ini's rules all hold, so add one that breaks: only the value error shows, as
  // rules are checked only once every value was read.
  EXPECT_EQ(LoadError(Fixture("bad_value.ini"), {"network.tcp_cc=dctcp"}),
            "tests/scenario/fixtures/bad_value.ini:4: [network] mtu = 'abc': expected a whole "
            "number of bytes from 576 to 9216");
}

}  // namespace
}  // namespace nbox::scenario
