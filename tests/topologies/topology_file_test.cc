// LoadTopologyFile: a valid file becomes the expected graph; every error names its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/topologies/test_graphs.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::EqualCostPaths;
using ::nbox::topo::testing::LinkEnds;
using ::nbox::topo::testing::VertexNamed;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Writes `contents` to a file named after the running test and returns its path.
std::string WriteFile(const std::string& contents) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "nbox_topo_" + info->name() + ".topo";
  std::ofstream(path) << contents;
  return path;
}

// Loading `contents` fails with "path:line: ..." and the message contains `what`.
void ExpectFileError(const std::string& contents, int line, const std::string& what) {
  const std::string path = WriteFile(contents);
  try {
    LoadTopologyFile(path);
    ADD_FAILURE() << "the file loaded; expected an error at line " << line << ": " << what;
  } catch (const TopologyFileError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ":" + std::to_string(line) + ": "));
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(TopoFile, ValidFileBecomesTheDeclaredGraph) {
  const std::string path = WriteFile(
      "# two leaves, one spine\n"
      "\n"
      "host h0..h3          # four hosts at once\n"
      "switch leaf0 leaf1\n"
      "switch spine0\n"
      "link h0..h1 leaf0 100Gbps 1us\n"
      "link h2..h3 leaf1 100Gbps 1us\n"
      "link leaf0..leaf1 spine0 400Gbps 500ns\n"
      "\tlink h0 h1   10Gbps 0s\r\n");
  const Topology t = LoadTopologyFile(path);
  EXPECT_NO_THROW(t.Validate());
  ASSERT_EQ(boost::num_vertices(t.graph), 7u);
  const char* names[] = {"h0", "h1", "h2", "h3", "leaf0", "leaf1", "spine0"};
  for (Vertex v = 0; v < 7; ++v) {
    EXPECT_EQ(t.graph[v].name, names[v]);
    EXPECT_EQ(t.graph[v].kind, v < 4 ? NodeKind::kHost : NodeKind::kSwitch);
  }
  ASSERT_EQ(t.hosts.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.hosts[i], static_cast<Vertex>(i));

  struct Expected {
    const char* ends;
    double rate_bps, latency_s;
  };
  const Expected links[] = {{"h0-leaf0", 100e9, 1e-6},     {"h1-leaf0", 100e9, 1e-6},
                            {"h2-leaf1", 100e9, 1e-6},     {"h3-leaf1", 100e9, 1e-6},
                            {"leaf0-spine0", 400e9, 5e-7}, {"leaf1-spine0", 400e9, 5e-7},
                            {"h0-h1", 10e9, 0.0}};
  ASSERT_EQ(t.links.size(), std::size(links));
  for (uint32_t i = 0; i < t.links.size(); ++i) {
    EXPECT_EQ(LinkEnds(t, i), links[i].ends) << "link " << i;
    EXPECT_EQ(t.graph[t.links[i]].id, i);
    EXPECT_DOUBLE_EQ(t.graph[t.links[i]].rate_bps, links[i].rate_bps) << "link " << i;
    EXPECT_DOUBLE_EQ(t.graph[t.links[i]].latency_s, links[i].latency_s) << "link " << i;
  }
  EXPECT_THAT(t.description, HasSubstr("4 hosts, 3 switches, 7 links"));
}

TEST(TopoFile, TwoRangesLinkEveryPairFirstNameMajor) {
  const Topology t =
      LoadTopologyFile(WriteFile("host a0 a1\n"
                                 "switch l0..l1 s0..s1\n"
                                 "link a0 l0 1Gbps 1us\n"
                                 "link a1 l1 1Gbps 1us\n"
                                 "link l0..l1 s0..s1 1Gbps 1us\n"));
  ASSERT_EQ(t.links.size(), 6u);
  EXPECT_EQ(LinkEnds(t, 2), "l0-s0");
  EXPECT_EQ(LinkEnds(t, 3), "l0-s1");
  EXPECT_EQ(LinkEnds(t, 4), "l1-s0");
  EXPECT_EQ(LinkEnds(t, 5), "l1-s1");
}

TEST(TopoFile, ShippedExampleIsATwoTierClos) {
  // Test binaries run from the repository root.
  const Topology t = LoadTopologyFile("topologies/examples/two-tier.topo");
  EXPECT_EQ(t.hosts.size(), 8u);
  EXPECT_EQ(boost::num_vertices(t.graph), 12u);  // + 2 leaves + 2 spines
  EXPECT_EQ(t.links.size(), 12u);                // 8 host links + 2 x 2 fabric links
  EXPECT_DOUBLE_EQ(LeafOversubscription(t, VertexNamed(t, "leaf0")), 4 * 100.0 / (2 * 100.0));
  const Routes routes = ComputeEqualCostRoutes(t);
  EXPECT_EQ(EqualCostPaths(t, routes, 0, 7).size(), 2u);
}

TEST(TopoFile, UnknownNodeSuggestsTheNearestName) {
  ExpectFileError(
      "host h0\n"
      "switch leaf0 leaf1 spine0\n"
      "link h0 leaf0 1Gbps 1us\n"
      "link laef1 spine0 1Gbps 1us\n",
      4, "unknown node 'laef1' (did you mean 'leaf1'?); expected a host or switch declared");
  ExpectFileError("link a b 1Gbps 1us\n", 1, "unknown node 'a' (no node is declared yet)");
  // Use before declaration is an unknown node too.
  ExpectFileError("host h0\nlink h0 s0 1Gbps 1us\nswitch s0\n", 2, "unknown node 's0'");
  // In a range, the first missing name is reported.
  ExpectFileError("host h0..h2\nswitch s0\nlink h0..h4 s0 1Gbps 1us\n", 3, "unknown node 'h3'");
}

TEST(TopoFile, DuplicateNameNamesTheFirstDeclaration) {
  ExpectFileError("host h0\nswitch s0\nhost h1 h0\n", 3,
                  "duplicate name 'h0' (first declared on line 1); expected every host and "
                  "switch name once");
  ExpectFileError("host h0..h3\n\nswitch h2..h5\n", 3,
                  "duplicate name 'h2' (first declared on line 1)");
}

// Found by the topology fuzzer's slow inputs: ranges multiply, and a link
// statement between two ranges of 100,000 asked for 10^10 links until memory ran out.
TEST(TopoFile, NodeAndLinkCountsAreBoundedBeforeAnythingIsBuilt) {
  ExpectFileError("host h0..h99999\nswitch s0..s99999\nlink h0..h99999 s0..s99999 1Gbps 1us\n", 3,
                  "this statement makes 100000 x 100000 links and the file has 0 already; a "
                  "topology file may have at most 4194304 links");
  ExpectFileError("host a0..a999999\nhost b0..b999999\nhost c0..c999999\n", 3,
                  "node 'c97152' is one too many: a topology file may declare at most 2097152 "
                  "hosts and switches");
}

TEST(TopoFile, BadRatesAndLatencies) {
  const std::string nodes = "host h0\nswitch s0\n";
  // The unit parser's own message (what it expected) follows the colon.
  ExpectFileError(nodes + "link h0 s0 100Gbpx 1us\n", 3, "bad rate '100Gbpx': ");
  ExpectFileError(nodes + "link h0 s0 fast 1us\n", 3, "bad rate 'fast': ");
  ExpectFileError(nodes + "link h0 s0 100Gbps soon\n", 3, "bad latency 'soon': ");
  ExpectFileError(nodes + "link h0 s0 100Gbps\n1us\n", 3, "link is missing LATENCY");
  // Zero rates and negative latencies are refused whether the unit parser or the file
  // parser notices first.
  ExpectFileError(nodes + "link h0 s0 0Gbps 1us\n", 3, "rate '0Gbps'");
  ExpectFileError(nodes + "link h0 s0 1Gbps -1us\n", 3, "latency '-1us'");
}

// The scenario keys' ranges hold in files too: 0.1 bps died of SIGFPE in ns-3,
// 0.5-10 bps of a TCP transport fatal error, and 1e300 s ran as 0 s.
TEST(TopoFile, RatesAndLatenciesHaveTheScenarioKeysRanges) {
  const std::string nodes = "host h0\nswitch s0\n";
  const std::string rate_range = "expected a rate from 1Mbps to 10Tbps";
  const std::string latency_range = "expected a duration from 0s to 1s";
  for (const char* rate : {"0.1bps", "0.5bps", "10bps", "999999bps", "10.1Tbps"}) {
    ExpectFileError(nodes + "link h0 s0 " + rate + " 1us\n", 3,
                    "rate '" + std::string(rate) + "' is out of range; " + rate_range);
  }
  for (const char* latency : {"1e300s", "2s", "1.001s"}) {
    ExpectFileError(nodes + "link h0 s0 1Gbps " + latency + "\n", 3,
                    "latency '" + std::string(latency) + "' is out of range; " + latency_range);
  }
  // The limits themselves are accepted.
  const Topology t =
      LoadTopologyFile(WriteFile(nodes + "host h1\nlink h0 s0 1Mbps 0s\nlink h1 s0 10Tbps 1s\n"));
  EXPECT_EQ(t.graph[t.links[0]].rate_bps, 1e6);
  EXPECT_EQ(t.graph[t.links[1]].rate_bps, 10e12);
  EXPECT_EQ(t.graph[t.links[1]].latency_s, 1);
}

TEST(TopoFile, ALongBadTokenIsShortenedInTheMessage) {
  const std::string token(100000, '9');
  ExpectFileError("host h0\nswitch s0\nlink h0 s0 " + token + "Tbps 1us\n", 3,
                  "rate '9999999999999999999999999999999999999999... (100004 bytes)'");
}

TEST(TopoFile, MissingAndExtraFields) {
  const std::string nodes = "host h0\nswitch s0\n";
  ExpectFileError(nodes + "link h0 s0 100Gbps\n", 3,
                  "link is missing LATENCY; expected link A B RATE LATENCY");
  ExpectFileError(nodes + "link h0 s0   # rate and latency forgotten\n", 3, "link is missing RATE");
  ExpectFileError(nodes + "link\n", 3, "link is missing A");
  ExpectFileError(nodes + "link h0 s0 1Gbps 1us 5\n", 3, "unexpected field '5' after LATENCY");
  ExpectFileError("host\n", 1, "host is missing NAME");
  ExpectFileError("host h0\nswitch   # none\n", 2, "switch is missing NAME");
}

TEST(TopoFile, UnknownDirectiveSuggestsTheNearest) {
  ExpectFileError("# hosts\nhots h0\n", 2,
                  "unknown directive 'hots' (did you mean 'host'?); expected host, switch or "
                  "link");
  ExpectFileError("host h0\nlnk h0 s0\n", 2, "(did you mean 'link'?)");
}

TEST(TopoFile, BadNamesAndRanges) {
  ExpectFileError("host 9x\n", 1, "bad name '9x'; expected a NAME");
  ExpectFileError("host h0,h1\n", 1, "bad name 'h0,h1'");
  ExpectFileError("host h7..h0\n", 1, "bad range 'h7..h0': 7 is above 0");
  ExpectFileError("host h0..s3\n", 1, "bad range 'h0..s3': 'h0' and 's3' differ");
  ExpectFileError("host h00..h07\n", 1, "leading zero");
  ExpectFileError("host h..h3\n", 1, "'h' does not end in a number");
  ExpectFileError("host h0..\n", 1, "bad range 'h0..'");
  ExpectFileError("host h0..h1000000\n", 1, "1000001 names; expected at most 1000000");
}

TEST(TopoFile, EmptyFileAndNoHosts) {
  ExpectFileError("", 1, "the file declares no node; expected host, switch or link lines");
  ExpectFileError("# only a comment\n\n   \n", 1, "the file declares no node");
  ExpectFileError("switch s0\n", 1, "the file declares no host");
}

TEST(TopoFile, UnlinkedHostSelfLinkAndDisconnectedGraph) {
  ExpectFileError("switch s0\nhost h0\nhost h1\nlink h0 s0 1Gbps 1us\n", 3,
                  "host 'h1' has no link");
  ExpectFileError("switch s0\nlink s0 s0 1Gbps 1us\n", 2, "link joins 's0' to itself");
  ExpectFileError(
      "host h0 h1\n"
      "host h2 h3\n"
      "switch s0\n"
      "switch s1\n"
      "link h0..h1 s0 1Gbps 1us\n"
      "link h2..h3 s1 1Gbps 1us\n",
      2, "the graph is disconnected: 'h2' has no path to 'h0' (line 1); expected one connected");
}

TEST(TopoFile, HostsJoinedOnlyThroughAHost) {
  ExpectFileError(
      "host h0 h1\n"
      "switch s0 s1\n"
      "host h2\n"
      "link h0..h1 s0 1Gbps 1us\n"
      "link h1..h2 s1 1Gbps 1us\n",
      3, "host 'h2' reaches host 'h0' (line 1) only through other hosts");
}

TEST(TopoFile, MissingFile) {
  try {
    LoadTopologyFile("no/such/file.topo");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const TopologyFileError& e) {
    EXPECT_THAT(e.what(), StartsWith("no/such/file.topo: cannot open"));
  }
}

}  // namespace
}  // namespace nbox::topo
