// Edit distances computed by hand, and which names count as typos of which.
#include "tools/cosim/scenario/nearest_name.h"

#include <gtest/gtest.h>

namespace nbox::scenario {
namespace {

TEST(EditDistance, HandComputedCases) {
  EXPECT_EQ(EditDistance("network", "network"), 0);
  EXPECT_EQ(EditDistance("netwrok", "network"), 1);   // one swap of neighbours
  EXPECT_EQ(EditDistance("chanels", "channels"), 1);  // one insertion
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);    // k->s, e->i, +g
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("abc", ""), 3);
  EXPECT_EQ(EditDistance("MTU", "mtu"), 0);  // case is ignored
  // Optimal string alignment edits no substring twice: "ca" -> "abc" costs 3, not 2.
  EXPECT_EQ(EditDistance("ca", "abc"), 3);
}

TEST(NearestName, SuggestsOnlyCloseNames) {
  const std::vector<std::string> sections = {"job",         "topology", "network",
                                             "collectives", "workload", "output"};
  EXPECT_EQ(NearestName("netwrok", sections), "network");
  EXPECT_EQ(NearestName("Network", sections), "network");
  EXPECT_EQ(NearestName("jbo", sections), "job");
  EXPECT_EQ(NearestName("collective", sections), "collectives");
  EXPECT_EQ(NearestName("telemetry", sections), "");
  EXPECT_EQ(NearestName("xyz", sections), "");
  // Distance allowed is a third of the length: 2 for "wrkloda" (7 characters, 2 edits).
  EXPECT_EQ(NearestName("wrkloda", sections), "workload");
  EXPECT_EQ(NearestName("wrklo", sections), "");
}

TEST(NearestName, TiesGoToTheEarlierCandidate) {
  EXPECT_EQ(NearestName("ab", {"aa", "bb"}), "aa");
  EXPECT_EQ(NearestName("ab", {"bb", "aa"}), "bb");
  EXPECT_EQ(NearestName("x", {}), "");
}

}  // namespace
}  // namespace nbox::scenario
