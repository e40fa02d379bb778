// PlaceRanksFromFile: the hosts a file lists, rank by rank; every mistake names its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A file named after the running test, in gtest's temporary folder.
std::string WriteFile(const std::string& contents) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "nbox_placement_" + info->name() + ".txt";
  std::ofstream(path) << contents;
  return path;
}

std::string ErrorOf(const Topology& topology, int world_size, const std::string& contents) {
  const std::string path = WriteFile(contents);
  try {
    PlaceRanksFromFile(topology, world_size, path);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no error";
}

// Two leaves of four hosts (h0-h3 under leaf0, h4-h7 under leaf1).
Topology TwoLeaves() {
  return MakeLeafSpine(2, 1, 4, 1e9, 1e9, 0);
}

TEST(PlacementFile, RanksTakeTheHostsInTheOrderNamed) {
  const std::string path = WriteFile(
      "# two on each leaf\n"
      "h4 h0   # ranks 0 and 1\n"
      "\n"
      "h5..h6\t h1\n");
  EXPECT_THAT(PlaceRanksFromFile(TwoLeaves(), 5, path), ElementsAre(4, 0, 5, 6, 1));
}

TEST(PlacementFile, EveryMistakeNamesItsLine) {
  const Topology t = TwoLeaves();
  EXPECT_THAT(ErrorOf(t, 2, "h0\nh9\n"), HasSubstr(":2: no host 'h9' in the topology"));
  EXPECT_THAT(ErrorOf(t, 2, "h0 hh1\n"),
              HasSubstr(":1: no host 'hh1' in the topology (nearest: 'h1')"));
  EXPECT_THAT(ErrorOf(t, 2, "h0\nleaf1\n"), HasSubstr(":2: 'leaf1' is a switch; expected a host"));
  EXPECT_THAT(ErrorOf(t, 3, "h0 h1\nh1\n"),
              HasSubstr(":2: host 'h1' was already given a rank on line 1"));
  EXPECT_THAT(ErrorOf(t, 2, "h0..h2\n"),
              HasSubstr(":1: more hosts than job.world_size = 2; expected one host per rank"));
  EXPECT_THAT(ErrorOf(t, 4, "h0\nh1\n"),
              HasSubstr(": 2 hosts for job.world_size = 4; expected one host per rank"));
  EXPECT_THAT(ErrorOf(t, 2, "h3..h1\n"), HasSubstr(":1: 'h3..h1': "));
  EXPECT_THAT(ErrorOf(t, 1, std::string(5000, 'x') + "!\n"), HasSubstr("... (5001 bytes)"));
  EXPECT_THROW(PlaceRanksFromFile(t, 1, ::testing::TempDir() + "no_such_placement.txt"),
               std::invalid_argument);
}

TEST(PlacementFile, AHostAnEarlierJobTookIsRefused) {
  std::vector<bool> taken(8, false);
  taken[1] = true;
  try {
    PlaceRanksFromFile(TwoLeaves(), 2, WriteFile("h0\nh1\n"), taken);
    ADD_FAILURE() << "a taken host was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(":2: host 'h1' is taken by an earlier job of the cluster"));
  }
}

}  // namespace
}  // namespace nbox::topo
