// ForEachLane: the bytes each (src, dst, channel) lane carries, in closed form, must equal the
// sum of the Send steps of the schedules the builders make (the slow way, read here), for
// every algorithm, with servers and without, even and uneven cuts, with chunking, with empty
// blocks; CriticalPathOf gives the textbook step counts.
#include "collectives/traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace nbox::coll {
namespace {

using LaneBytes = std::map<std::tuple<int, int, int>, uint64_t>;  // (src, dst, channel)

LaneBytes FromSchedules(const CollectiveSpec& spec) {
  LaneBytes lanes;
  for (const RankSchedule& rank : BuildSchedule(spec).ranks) {
    for (const Step& step : rank.steps) {
      if (step.kind == StepKind::kSend) lanes[{rank.rank, step.peer, step.channel}] += step.bytes;
    }
  }
  return lanes;
}

LaneBytes FromClosedForm(const CollectiveSpec& spec) {
  LaneBytes lanes;
  ForEachLane(spec, [&](const LaneTraffic& lane) {
    EXPECT_GT(lane.bytes, 0u);
    EXPECT_TRUE(lanes.emplace(std::make_tuple(lane.src, lane.dst, lane.channel), lane.bytes).second)
        << "lane visited twice";
    EXPECT_LT(lane.stage, static_cast<int>(CriticalPathOf(spec).steps.size()));
  });
  return lanes;
}

struct Case {
  CollectiveOp op;
  Algorithm algorithm;
  int world;
  int ranks_per_server;
  uint64_t bytes;
  int channels;
  uint64_t chunk_bytes;
};

// "allreduce_ring_W8_G0_4000B_C2_K512": what the case runs, so that a failure names it. Only
// letters, digits and '_' ("halving-doubling" loses its '-').
std::string CaseName(const Case& c) {
  std::string name = std::string(ToString(c.op)) + "_" + std::string(ToString(c.algorithm)) + "_W" +
                     std::to_string(c.world) + "_G" + std::to_string(c.ranks_per_server) + "_" +
                     std::to_string(c.bytes) + "B_C" + std::to_string(c.channels) + "_K" +
                     std::to_string(c.chunk_bytes);
  name.erase(std::remove_if(name.begin(), name.end(),
                            [](unsigned char ch) { return !std::isalnum(ch) && ch != '_'; }),
             name.end());
  return name;
}

class TrafficTest : public ::testing::TestWithParam<Case> {};

TEST_P(TrafficTest, LanesCarryWhatTheSchedulesSend) {
  const Case& c = GetParam();
  CollectiveSpec spec;
  spec.op = c.op;
  spec.algorithm = c.algorithm;
  spec.world_size = c.world;
  spec.ranks_per_server = c.ranks_per_server;
  spec.bytes = c.bytes;
  spec.channels = c.channels;
  spec.chunk_bytes = c.chunk_bytes;
  spec.root = c.op == CollectiveOp::kBroadcast ? c.world / 2 : 0;
  if (c.op == CollectiveOp::kAllToAllV) {
    auto counts = std::make_shared<std::vector<uint64_t>>();
    for (int i = 0; i < c.world * c.world; ++i) counts->push_back(4 * uint64_t((i * 7) % 5));
    spec.counts = counts;
    spec.bytes = 0;
  }
  EXPECT_EQ(FromClosedForm(spec), FromSchedules(spec));
}

using Op = CollectiveOp;
using Alg = Algorithm;
INSTANTIATE_TEST_SUITE_P(
    EveryAlgorithm, TrafficTest,
    ::testing::Values(Case{Op::kAllReduce, Alg::kRing, 8, 0, 4 * 1000, 2, 512},
                      Case{Op::kAllReduce, Alg::kRing, 5, 0, 4 * 13, 3, 0},        // uneven, tiny
                      Case{Op::kAllReduce, Alg::kRing, 6, 0, 4 * 5, 2, 0},         // empty blocks
                      Case{Op::kAllReduce, Alg::kRing, 12, 4, 4 * 9973, 2, 1024},  // rail rings
                      Case{Op::kAllReduce, Alg::kRing, 6, 2, 4 * 777, 1, 0},  // odd servers, G = 2
                      Case{Op::kAllGather, Alg::kRing, 7, 0, 4 * 7 * 31, 2, 64},
                      Case{Op::kAllGather, Alg::kRing, 4, 0, 4 * 10, 3, 0},
                      Case{Op::kReduceScatter, Alg::kRing, 9, 3, 4 * 1001, 2, 256},
                      Case{Op::kReduceScatter, Alg::kRing, 3, 0, 4 * 2, 2, 0},
                      Case{Op::kBroadcast, Alg::kRing, 6, 0, 4 * 1003, 2, 400},
                      Case{Op::kBroadcast, Alg::kRing, 3, 0, 4 * 1, 2, 0},
                      Case{Op::kAllReduce, Alg::kHierarchical, 12, 4, 4 * 10007, 2, 2048},
                      Case{Op::kAllReduce, Alg::kHierarchical, 8, 4, 4 * 17, 3, 0},   // empty cells
                      Case{Op::kAllReduce, Alg::kHierarchical, 4, 4, 4 * 100, 1, 0},  // one server
                      Case{Op::kAllReduce, Alg::kHierarchical, 5, 1, 4 * 101, 2,
                           0},  // one GPU per server
                      Case{Op::kAllReduce, Alg::kDirect, 7, 0, 4 * 1001, 2, 128},
                      Case{Op::kAllReduce, Alg::kDirect, 5, 0, 4 * 3, 2, 0},  // empty blocks
                      Case{Op::kAllGather, Alg::kDirect, 6, 0, 4 * 6 * 17 + 4, 3, 16},
                      Case{Op::kReduceScatter, Alg::kDirect, 4, 0, 4 * 99, 1, 0},
                      Case{Op::kAllReduce, Alg::kHalvingDoubling, 8, 0, 4 * 1001, 2, 128},
                      Case{Op::kAllReduce, Alg::kHalvingDoubling, 7, 0, 4 * 977, 3, 64},  // folded
                      Case{Op::kAllReduce, Alg::kHalvingDoubling, 6, 0, 4 * 4, 2, 0},     // empty
                      Case{Op::kAllGather, Alg::kHalvingDoubling, 12, 0, 4 * 12 * 5 + 8, 2, 0},
                      Case{Op::kAllGather, Alg::kHalvingDoubling, 5, 0, 4 * 3, 1, 0},
                      Case{Op::kReduceScatter, Alg::kHalvingDoubling, 11, 0, 4 * 1013, 2, 32},
                      Case{Op::kReduceScatter, Alg::kHalvingDoubling, 16, 0, 4 * 160, 1, 0},
                      Case{Op::kAllReduce, Alg::kTree, 8, 0, 4 * 1001, 2, 128},
                      Case{Op::kAllReduce, Alg::kTree, 7, 0, 4 * 977, 3, 64},
                      Case{Op::kAllReduce, Alg::kTree, 5, 0, 4 * 1, 2, 0},  // an empty slice
                      Case{Op::kBroadcast, Alg::kTree, 7, 0, 4 * 1003, 2, 400},
                      Case{Op::kAllReduce, Alg::kTree, 12, 4, 4 * 1001, 4, 128},  // servers
                      Case{Op::kAllReduce, Alg::kTree, 6, 3, 4 * 77, 1, 0},
                      Case{Op::kBroadcast, Alg::kTree, 6, 0, 4 * 999, 3, 0},
                      Case{Op::kAllToAll, Alg::kDirect, 7, 0, 4 * 7 * 11 + 8, 2, 32},
                      Case{Op::kAllToAllV, Alg::kDirect, 5, 0, 0, 2, 0},
                      Case{Op::kAllToAll, Alg::kHierarchical, 12, 4, 4 * 12 * 9, 2, 16},
                      Case{Op::kAllToAllV, Alg::kHierarchical, 8, 2, 0, 3, 0}),
    [](const ::testing::TestParamInfo<Case>& info) { return CaseName(info.param); });

TEST(CriticalPath, TextbookStepCounts) {
  CollectiveSpec spec;
  spec.world_size = 8;
  spec.bytes = 4096;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{14});  // 2(W-1)
  spec.op = CollectiveOp::kAllGather;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{7});
  spec.op = CollectiveOp::kAllReduce;
  spec.algorithm = Algorithm::kHierarchical;
  spec.ranks_per_server = 4;  // 2 servers of 4: 2(G-1) inside, 2(S-1) across
  EXPECT_EQ(CriticalPathOf(spec).steps, (std::vector<int>{6, 2}));
  EXPECT_EQ(CriticalPathOf(spec).bandwidth_scale, 1);
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kRing);
  spec.op = CollectiveOp::kAllReduce;  // direct: every peer at once, one hop per phase
  spec.algorithm = Algorithm::kDirect;
  spec.ranks_per_server = 0;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{2});
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kParallel);
  spec.op = CollectiveOp::kAllGather;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{1});
  spec.op = CollectiveOp::kAllReduce;  // halving-doubling: log2 W rounds of two hops each
  spec.algorithm = Algorithm::kHalvingDoubling;
  EXPECT_EQ(CriticalPathOf(spec).steps, (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kSequential);
  spec.world_size = 8;  // the double binary tree: up and down a depth of 3, pipelined
  spec.algorithm = Algorithm::kTree;
  spec.channels = 2;
  spec.bytes = 16 << 20;
  spec.chunk_bytes = 256 << 10;  // 32 chunks a channel; an inner node sends 3 x 32, a leaf 32
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{6});
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kChain);
  EXPECT_DOUBLE_EQ(CriticalPathOf(spec).bandwidth_scale, 1 + 5.0 / 128);
  spec.channels = 1;
  spec.chunk_bytes = 0;
  spec.bytes = 4096;
  spec.algorithm = Algorithm::kHalvingDoubling;
  spec.world_size = 12;  // 4 folded ranks: a hop in, 3 rounds over 8, a hop out
  spec.op = CollectiveOp::kReduceScatter;
  EXPECT_EQ(CriticalPathOf(spec).steps, (std::vector<int>{1, 1, 1, 1, 1}));
  spec.world_size = 8;
  spec.op = CollectiveOp::kAllToAll;  // every pair at once: one step, lanes in parallel
  spec.algorithm = Algorithm::kDirect;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{1});
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kParallel);
}

TEST(CriticalPath, TheBroadcastChainPaysItsPipelineFill) {
  // 8 ranks, 8 MiB over 2 channels of 4 MiB, 1 MiB chunks: the last chunk leaves the root
  // after 4 chunk times and needs 6 more hops: (8 - 2 + 4) / 4 of the root's busy time.
  CollectiveSpec spec;
  spec.op = CollectiveOp::kBroadcast;
  spec.world_size = 8;
  spec.bytes = 8 << 20;
  spec.channels = 2;
  spec.chunk_bytes = 1 << 20;
  EXPECT_EQ(CriticalPathOf(spec).steps, std::vector<int>{7});
  EXPECT_EQ(CriticalPathOf(spec).overlap, CriticalPath::Overlap::kChain);
  EXPECT_DOUBLE_EQ(CriticalPathOf(spec).bandwidth_scale, 10.0 / 4);
  spec.chunk_bytes = 0;  // one chunk per channel: every hop waits for the whole slice
  EXPECT_DOUBLE_EQ(CriticalPathOf(spec).bandwidth_scale, 7);
}

}  // namespace
}  // namespace nbox::coll
