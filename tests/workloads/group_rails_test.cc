// Every group of a Megatron-style layout keeps its rings and trees on the rails: on servers of
// 8 GPUs (world rank r on server r / 8, local GPU r % 8, whose NIC is on rail r % 8), every
// hop of a ring or tree between two servers joins GPUs of the same local index, so a
// rail-optimised fabric carries it on one rail and never through a spine. Checked on the group
// members' world ranks, independently of how the rings are built.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/group_servers.h"
#include "collectives/ring_order.h"
#include "collectives/tree.h"
#include "workloads/parallel_layout.h"

namespace nbox {
namespace {

constexpr int kGpus = 8;

struct Hops {
  int between_servers = 0;
  int off_rail = 0;  // between servers on different local GPUs: through a spine
};

void Count(int a, int b, Hops& hops) {
  if (a / kGpus == b / kGpus) return;  // NVLink
  ++hops.between_servers;
  if (a % kGpus != b % kGpus) ++hops.off_rail;
}

// The hops of every channel's ring and all-reduce tree of `members`, as the communicator
// builds its spec (SpecFromSettings: ranks_per_server = GroupRanksPerServer).
Hops GroupHops(const std::vector<int>& members, int channels) {
  coll::CollectiveSpec spec;
  spec.world_size = static_cast<int>(members.size());
  spec.channels = channels;
  spec.bytes = static_cast<uint64_t>(spec.world_size) * channels * 4;
  spec.ranks_per_server = coll::GroupRanksPerServer(members, kGpus);
  Hops hops;
  for (int channel = 0; channel < channels; ++channel) {
    const coll::RingOrder ring(spec, channel);
    for (int position = 0; position < spec.world_size; ++position) {
      Count(members[ring.RankAt(position)], members[ring.RankAt(position + 1)], hops);
    }
    for (int rank = 0; rank < spec.world_size; ++rank) {
      const coll::TreeLinks links =
          coll::AllReduceTreeLinks(spec.world_size, spec.ranks_per_server, channel, rank);
      if (links.parent >= 0) Count(members[rank], members[links.parent], hops);
    }
  }
  return hops;
}

TEST(GroupRanksPerServer, HandCheckedShapes) {
  EXPECT_EQ(coll::GroupRanksPerServer({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 8),
            8);
  EXPECT_EQ(coll::GroupRanksPerServer({0, 4, 8, 12, 16, 20}, 8), 2);  // t = 4: GPUs 0 and 4
  EXPECT_EQ(coll::GroupRanksPerServer({3, 11, 19}, 8), 1);            // t = 8: one per server
  EXPECT_EQ(coll::GroupRanksPerServer({4, 5, 6, 7}, 8), 4);           // half a server
  EXPECT_EQ(coll::GroupRanksPerServer({0, 3, 6, 9, 12, 15}, 8), 0);  // t = 3: 3, 3 at 0,3,6 / 1,4,7
  EXPECT_EQ(coll::GroupRanksPerServer({0, 1, 9, 8}, 8), 0);          // slots in another order
  EXPECT_EQ(coll::GroupRanksPerServer({0, 1, 8, 9, 2, 3}, 8), 0);    // server 0 twice
  EXPECT_EQ(coll::GroupRanksPerServer({6, 7, 8, 9}, 8), 0);          // straddles at GPUs 6,7/0,1
  EXPECT_EQ(coll::GroupRanksPerServer({0, 1}, 0), 0);                // no servers
  // The consecutive form agrees with the general one.
  for (int first = 0; first < 24; ++first) {
    for (int count = 1; count <= 24; ++count) {
      std::vector<int> members;
      for (int r = first; r < first + count; ++r) members.push_back(r);
      EXPECT_EQ(coll::ConsecutiveRanksPerServer(first, count, 8),
                coll::GroupRanksPerServer(members, 8))
          << first << " + " << count;
    }
  }
}

TEST(GroupRails, EveryGroupOfEveryMegatronShapeStaysOnItsRails) {
  int groups = 0;
  for (const std::string order : {"tp-cp-dp-pp", "tp-cp-pp-dp"}) {
    for (int t : {1, 2, 4, 8}) {
      for (int c : {1, 2, 4, 8}) {
        for (int p : {1, 2}) {
          for (int e : {1, 2, 4}) {
            work::ParallelDims dims;
            dims.tensor = t;
            dims.context = c;
            dims.pipeline = p;
            dims.data = 16 * 8 / (t * c * p) >= e ? 16 * 8 / (t * c * p) : e;
            if (dims.data % e != 0) continue;
            dims.expert = e;
            dims.order = order;
            const work::ParallelLayout layout(dims);
            for (int rank = 0; rank < layout.world(); ++rank) {
              for (const auto& group : {layout.TensorGroup(rank), layout.DataGroup(rank),
                                        layout.ContextGroup(rank), layout.DataContextGroup(rank),
                                        layout.ExpertGroup(rank), layout.ExpertDataGroup(rank)}) {
                if (group.size() < 2) continue;
                SCOPED_TRACE(order + " t" + std::to_string(t) + " c" + std::to_string(c) + " p" +
                             std::to_string(p) + " e" + std::to_string(e) + " rank " +
                             std::to_string(rank));
                ASSERT_GT(coll::GroupRanksPerServer(group, kGpus), 0);
                for (int channels : {1, 2, 4}) {
                  const Hops hops = GroupHops(group, channels);
                  EXPECT_EQ(hops.off_rail, 0) << hops.between_servers << " hops between servers";
                }
                ++groups;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(groups, 10000);
}

// Rank order, the shape rings had before the group's servers were known: the data-parallel
// ring of t = 4 leaves each server from GPU 4 and enters the next at GPU 0, off its rail.
TEST(GroupRails, RankOrderWouldCrossTheSpines) {
  std::vector<int> data_group;
  for (int server = 0; server < 16; ++server) {
    data_group.push_back(server * kGpus);
    data_group.push_back(server * kGpus + 4);
  }
  Hops rank_order;
  for (size_t i = 0; i < data_group.size(); ++i) {
    Count(data_group[i], data_group[(i + 1) % data_group.size()], rank_order);
  }
  EXPECT_EQ(rank_order.off_rail, 16);
  EXPECT_EQ(GroupHops(data_group, 2).off_rail, 0);
}

// Two GPUs of the group on each of an odd number of servers: no ring can enter and leave every
// server on alternating rails, so it goes out on one and comes back on the other.
TEST(GroupRails, TwoGpusOnEachOfAnOddNumberOfServersStayOnTheirRails) {
  for (int servers : {3, 5, 7}) {
    std::vector<int> data_group;
    for (int server = 0; server < servers; ++server) {
      data_group.push_back(server * kGpus + 1);
      data_group.push_back(server * kGpus + 5);
    }
    for (int channels : {1, 2}) {
      const Hops hops = GroupHops(data_group, channels);
      EXPECT_EQ(hops.off_rail, 0) << servers << " servers";
    }
  }
}

}  // namespace
}  // namespace nbox
