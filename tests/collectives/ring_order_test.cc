// RingOrder and the server-aware ring: hand-written orders for 2 x 8 GPUs, the rail
// properties the order promises for every small shape, and the ring schedules on it still
// computing their collectives (reference executor, random interleavings).
#include "collectives/ring_order.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::AllOps;
using testing::CheckRun;
using testing::Spec;

CollectiveSpec ServerSpec(CollectiveOp op, int servers, int gpus, int channels, uint64_t bytes,
                          uint64_t chunk = 0) {
  CollectiveSpec spec = Spec(op, servers * gpus, bytes, channels, chunk);
  spec.ranks_per_server = gpus;
  return spec;
}

std::vector<int> Order(const CollectiveSpec& spec, int channel) {
  const RingOrder ring(spec, channel);
  std::vector<int> order;
  for (int p = 0; p < spec.world_size; ++p) order.push_back(ring.RankAt(p));
  return order;
}

// Written out by hand from the rule in ring_order.h: server 0 entered at 0 and left at 1,
// server 1 entered at 1 and left at 0; channel 1 shifts local indices by 2.
TEST(CollectivesRingOrder, TwoServersOfEightByHand) {
  const CollectiveSpec spec = ServerSpec(CollectiveOp::kAllReduce, 2, 8, 2, 1024);
  EXPECT_EQ(Order(spec, 0),
            (std::vector<int>{0, 2, 3, 4, 5, 6, 7, 1, 9, 10, 11, 12, 13, 14, 15, 8}));
  EXPECT_EQ(Order(spec, 1),
            (std::vector<int>{2, 4, 5, 6, 7, 0, 1, 3, 11, 12, 13, 14, 15, 8, 9, 10}));
}

TEST(CollectivesRingOrder, ThreeServersOfFourByHand) {
  // Entries 0, 1, 2; exits 1, 2, 0.
  const CollectiveSpec spec = ServerSpec(CollectiveOp::kAllReduce, 3, 4, 1, 1024);
  EXPECT_EQ(Order(spec, 0), (std::vector<int>{0, 2, 3, 1, 5, 7, 4, 6, 10, 11, 9, 8}));
}

TEST(CollectivesRingOrder, WithoutServersOrOnOneServerItIsThePlainRing) {
  for (int world : {1, 2, 5, 8}) {
    CollectiveSpec spec = Spec(CollectiveOp::kAllReduce, world, 64 * world, 3, 0);
    for (int ranks_per_server : {0, world}) {
      spec.ranks_per_server = ranks_per_server;
      for (int channel = 0; channel < 3; ++channel) {
        const RingOrder ring(spec, channel);
        for (int r = 0; r < world; ++r) EXPECT_EQ(ring.Next(r), (r + 1) % world);
      }
    }
  }
}

// For every shape: a permutation whose inverse is PositionOf; each server's ranks are
// consecutive (but for S odd and G == 2, where the ring goes out on one local index and back on
// the other: 2(S - 1) crossings); every hop between servers joins equal local indices; with
// channels * u <= G the channels cross on disjoint rails (u = 2, or 3 for odd S).
TEST(CollectivesRingOrder, RailAlignedForEveryShape) {
  for (int servers = 1; servers <= 7; ++servers) {
    for (int gpus = 1; gpus <= 8; ++gpus) {
      for (int channels = 1; channels <= 4; ++channels) {
        const CollectiveSpec spec =
            ServerSpec(CollectiveOp::kAllReduce, servers, gpus, channels, 4096);
        const int world = servers * gpus;
        const int used = servers % 2 == 0 || gpus == 2 ? 2 : 3;
        std::set<int> rails_so_far;
        bool rails_disjoint = true;
        for (int c = 0; c < channels; ++c) {
          const RingOrder ring(spec, c);
          std::set<int> seen, rails;
          int server_changes = 0, cross_rail = 0;
          for (int p = 0; p < world; ++p) {
            const int r = ring.RankAt(p);
            ASSERT_EQ(ring.PositionOf(r), p);
            seen.insert(r);
            const int next = ring.RankAt(p + 1);
            EXPECT_EQ(ring.Next(r), next);
            EXPECT_EQ(ring.Previous(next), r);
            if (r / gpus != next / gpus) {
              ++server_changes;
              rails.insert(r % gpus);
              rails.insert(next % gpus);
              if (r % gpus != next % gpus) ++cross_rail;
            }
          }
          EXPECT_EQ(seen.size(), static_cast<size_t>(world));
          const bool out_and_back = servers >= 3 && servers % 2 == 1 && gpus == 2;
          EXPECT_EQ(server_changes, servers == 1 ? 0 : out_and_back ? 2 * (servers - 1) : servers);
          EXPECT_EQ(cross_rail, 0) << servers << " x " << gpus << " channel " << c;
          for (int rail : rails) rails_disjoint &= rails_so_far.insert(rail).second;
        }
        if (servers > 1 && gpus > 1 && channels * used <= gpus) {
          EXPECT_TRUE(rails_disjoint) << servers << " x " << gpus << ", " << channels;
        }
      }
    }
  }
}

// With an even number of servers, G channels (two laps of G / 2) use every NIC of every server
// once in each direction: each crossing leaves from one GPU's NIC and enters another's, and the
// second lap runs the other way.
TEST(CollectivesRingOrder, TwoLapsOfChannelsUseEveryNicBothWaysOnce) {
  for (int servers : {2, 4, 6}) {
    for (int gpus : {2, 4, 8}) {
      const CollectiveSpec spec = ServerSpec(CollectiveOp::kAllReduce, servers, gpus, gpus, 4096);
      const int world = servers * gpus;
      std::map<std::pair<int, bool>, int> uses;  // (rank, sending) -> crossings
      for (int c = 0; c < gpus; ++c) {
        const RingOrder ring(spec, c);
        for (int r = 0; r < world; ++r) {
          const int next = ring.Next(r);
          if (r / gpus == next / gpus) continue;
          ++uses[{r, true}];
          ++uses[{next, false}];
        }
      }
      EXPECT_EQ(uses.size(), static_cast<size_t>(2 * world)) << servers << " x " << gpus;
      for (const auto& [nic, count] : uses) {
        EXPECT_EQ(count, 1) << servers << " x " << gpus << ": rank " << nic.first
                            << (nic.second ? " sends" : " receives");
      }
    }
  }
}

// Every send of a server-aware ring schedule goes to the next rank of its channel's ring.
TEST(CollectivesRingOrder, RingScheduleSendsToTheRingSuccessor) {
  const CollectiveSpec spec = ServerSpec(CollectiveOp::kAllReduce, 2, 8, 2, 16 * 2 * 4 * 3);
  const Schedule schedule = BuildSchedule(spec);
  for (const RankSchedule& rank : schedule.ranks) {
    for (const Step& step : rank.steps) {
      const RingOrder ring(spec, step.channel);
      if (step.kind == StepKind::kSend) {
        EXPECT_EQ(step.peer, ring.Next(rank.rank));
      } else {
        EXPECT_EQ(step.peer, ring.Previous(rank.rank));
      }
    }
  }
}

TEST(CollectivesRingOrder, ServerAwareRingsComputeTheirCollectives) {
  int runs = 0;
  for (const auto& [servers, gpus] : std::vector<std::pair<int, int>>{{2, 4}, {3, 2}, {3, 3}}) {
    for (int channels : {1, 3}) {
      const uint64_t world = servers * gpus;
      for (uint64_t elements : {uint64_t{7}, 4 * world * channels + 3}) {
        for (uint64_t chunk : {uint64_t{0}, uint64_t{8}}) {
          for (CollectiveOp op : AllOps()) {
            const Schedule schedule =
                BuildSchedule(ServerSpec(op, servers, gpus, channels, elements * 4, chunk));
            for (uint64_t seed = 0; seed < 4; ++seed) {
              ASSERT_EQ(CheckRun<int32_t>(schedule, seed, elements), "");
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 3 * 2 * 2 * 2 * 3 * 4);
}

}  // namespace
}  // namespace nbox::coll
