// PlaceRanks and LeafOversubscription against hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "tests/topologies/test_graphs.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

using ::nbox::topo::testing::VertexNamed;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TopoPlacement, RanksFillHostsInOrder) {
  const Topology t = MakeStar(4, 1e9, 0);
  EXPECT_THAT(PlaceRanks(t, 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(PlaceRanks(t, 4), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(PlaceRanks(t, 8, 2), ElementsAre(0, 0, 1, 1, 2, 2, 3, 3));
  EXPECT_THAT(PlaceRanks(t, 7, 2), ElementsAre(0, 0, 1, 1, 2, 2, 3));
  EXPECT_THAT(PlaceRanks(t, 1, 8), ElementsAre(0));
}

// Hosts h0-h3 under leaf0, h4-h7 under leaf1: ranks alternate leaves, each leaf's hosts in
// order; with 3 leaves of 2 hosts the deal goes round the three. On a star spreading is packing.
TEST(TopoPlacement, SpreadDealsRanksRoundTheSwitches) {
  const Topology two_leaves = MakeLeafSpine(2, 1, 4, 1e9, 1e9, 0);
  EXPECT_THAT(SpreadRanks(two_leaves, 4), ElementsAre(0, 4, 1, 5));
  EXPECT_THAT(SpreadRanks(two_leaves, 7), ElementsAre(0, 4, 1, 5, 2, 6, 3));
  const Topology three_leaves = MakeLeafSpine(3, 2, 2, 1e9, 1e9, 0);
  EXPECT_THAT(SpreadRanks(three_leaves, 6), ElementsAre(0, 2, 4, 1, 3, 5));
  EXPECT_THAT(SpreadRanks(MakeStar(4, 1e9, 0), 3), ElementsAre(0, 1, 2));
  EXPECT_THROW(SpreadRanks(two_leaves, 9), std::invalid_argument);
}

// A seed's placement is a permutation of the hosts, the same every time; and over many seeds
// every order of 4 hosts comes up as often as any other (24 orders, 24,000 seeds: 1,000 each
// expected, 3.5 standard deviations is 110).
TEST(TopoPlacement, ShuffledRanksAreAnUnbiasedPermutationOfTheHosts) {
  const Topology t = MakeStar(4, 1e9, 0);
  EXPECT_EQ(ShuffledRanks(t, 4, 7), ShuffledRanks(t, 4, 7));
  std::map<std::vector<int>, int> orders;
  for (uint64_t seed = 0; seed < 24000; ++seed) {
    std::vector<int> hosts = ShuffledRanks(t, 4, seed);
    ++orders[hosts];
    std::sort(hosts.begin(), hosts.end());
    ASSERT_THAT(hosts, ElementsAre(0, 1, 2, 3)) << "seed " << seed;
  }
  EXPECT_EQ(orders.size(), 24u);
  for (const auto& [order, count] : orders) EXPECT_NEAR(count, 1000, 110);
  // Fewer ranks than hosts: the first ones of the permutation, on distinct hosts.
  const Topology big = MakeStar(100, 1e9, 0);
  std::vector<int> some = ShuffledRanks(big, 10, 3);
  const std::vector<int> all = ShuffledRanks(big, 100, 3);
  EXPECT_EQ(some, std::vector<int>(all.begin(), all.begin() + 10));
  std::sort(some.begin(), some.end());
  EXPECT_EQ(std::unique(some.begin(), some.end()), some.end());
  EXPECT_THROW(ShuffledRanks(t, 5, 1), std::invalid_argument);
}

// A job placed after others takes only the hosts they left: packed the first free ones, spread
// dealt round the switches of the free ones, random a permutation of the free ones; and with
// nothing taken each gives what it gives a job alone.
TEST(TopoPlacement, AJobTakesOnlyTheHostsEarlierJobsLeft) {
  const Topology two_leaves = MakeLeafSpine(2, 1, 4, 1e9, 1e9, 0);
  std::vector<bool> taken(8, false);
  taken[0] = taken[1] = taken[4] = true;
  EXPECT_THAT(PackedRanks(two_leaves, 3, taken), ElementsAre(2, 3, 5));
  EXPECT_THAT(SpreadRanks(two_leaves, 4, taken), ElementsAre(2, 5, 3, 6));
  std::vector<int> shuffled = ShuffledRanks(two_leaves, 5, 9, taken);
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_THAT(shuffled, ElementsAre(2, 3, 5, 6, 7));
  EXPECT_EQ(PackedRanks(two_leaves, 5), PlaceRanks(two_leaves, 5));
  EXPECT_EQ(ShuffledRanks(two_leaves, 8, 9, std::vector<bool>(8, false)),
            ShuffledRanks(two_leaves, 8, 9));
  try {
    PackedRanks(two_leaves, 6, taken);
    ADD_FAILURE() << "6 ranks fitted 5 free hosts";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("5 of the topology's 8 hosts are free"));
  }
}

TEST(TopoPlacement, RejectsWhatDoesNotFit) {
  const Topology t = MakeStar(4, 1e9, 0);
  auto message_of = [&](int world_size, int ranks_per_host) -> std::string {
    try {
      PlaceRanks(t, world_size, ranks_per_host);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_THAT(message_of(5, 1), HasSubstr("world_size 5 does not fit; expected at most 4"));
  EXPECT_THAT(message_of(9, 2), HasSubstr("expected at most 8 (4 hosts x 2 ranks_per_host)"));
  EXPECT_THAT(message_of(0, 1), HasSubstr("world_size must be >= 1, got 0"));
  EXPECT_THAT(message_of(-3, 1), HasSubstr("world_size must be >= 1, got -3"));
  EXPECT_THAT(message_of(2, 0), HasSubstr("ranks_per_host must be >= 1, got 0"));
}

TEST(TopoPlacement, LeafSpineOversubscription) {
  // 4 hosts x 100 Gb/s down, 2 spines x 100 Gb/s up: 400 / 200 = 2.
  const Topology t = MakeLeafSpine(4, 2, 4, 100e9, 100e9, 1e-6);
  for (const char* leaf : {"leaf0", "leaf1", "leaf2", "leaf3"}) {
    EXPECT_DOUBLE_EQ(LeafOversubscription(t, VertexNamed(t, leaf)), 2.0) << leaf;
  }
  // 4 x 100 down, 2 x 200 up: non-blocking.
  const Topology fast = MakeLeafSpine(2, 2, 4, 100e9, 200e9, 1e-6);
  EXPECT_DOUBLE_EQ(LeafOversubscription(fast, VertexNamed(fast, "leaf1")), 1.0);
  // 3 x 25 down, 4 x 10 up: 75 / 40.
  const Topology odd = MakeLeafSpine(2, 4, 3, 25e9, 10e9, 1e-6);
  EXPECT_DOUBLE_EQ(LeafOversubscription(odd, VertexNamed(odd, "leaf0")), 75.0 / 40.0);
}

TEST(TopoPlacement, FatTreeEdgeIsNonBlockingAndStarHasNoUplink) {
  const Topology fat = MakeFatTree(4, 100e9, 1e-6);
  EXPECT_DOUBLE_EQ(LeafOversubscription(fat, VertexNamed(fat, "edge2_1")), 1.0);
  const Topology star = MakeStar(3, 1e9, 0);
  EXPECT_TRUE(std::isinf(LeafOversubscription(star, VertexNamed(star, "sw0"))));
}

TEST(TopoPlacement, OversubscriptionNeedsAnEdgeSwitch) {
  const Topology t = MakeLeafSpine(2, 2, 2, 1e9, 1e9, 0);
  EXPECT_THROW(LeafOversubscription(t, t.hosts[0]), std::invalid_argument);
  EXPECT_THROW(LeafOversubscription(t, VertexNamed(t, "spine0")), std::invalid_argument);
  EXPECT_THROW(LeafOversubscription(t, 1000), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::topo
