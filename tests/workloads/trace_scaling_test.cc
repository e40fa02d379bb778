// ScaleCollectiveTrace against its rules (workloads/trace_scaling.h), on a two-rank trace made
// here; every expected size is worked out by hand.
#include "workloads/trace_scaling.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/program.h"

namespace nbox::work {
namespace {

using coll::CollectiveOp;

TraceCollective Collective(int line, CollectiveOp op, uint64_t bytes, uint64_t start, uint64_t end,
                           int root = 0) {
  TraceCollective c;
  c.line = line;
  c.op = op;
  c.bytes = bytes;
  c.start_ns = start;
  c.end_ns = end;
  c.root = root;
  return c;
}

// Two ranks: an all-reduce of 64 bytes, an all-gather of 2 x 40, a reduce-scatter of 2 x 12,
// a broadcast of 8 from rank 1. Rank 1 computes 5 ns longer before the all-gather.
CollectiveTrace TwoRanks() {
  CollectiveTrace trace;
  trace.path = "two.jsonl";
  trace.nranks = 2;
  trace.communicators = {{"0x0000000000000001", {0, 1}, 1}};
  trace.ranks = {
      {Collective(1, CollectiveOp::kAllReduce, 64, 0, 10),
       Collective(3, CollectiveOp::kAllGather, 80, 20, 30),
       Collective(5, CollectiveOp::kReduceScatter, 24, 30, 40),
       Collective(7, CollectiveOp::kBroadcast, 8, 40, 50, 1)},
      {Collective(2, CollectiveOp::kAllReduce, 64, 0, 10),
       Collective(4, CollectiveOp::kAllGather, 80, 25, 30),
       Collective(6, CollectiveOp::kReduceScatter, 24, 30, 40),
       Collective(8, CollectiveOp::kBroadcast, 8, 40, 50, 1)},
  };
  return trace;
}

TEST(TraceScaling, SameSizeIsTheTraceItself) {
  const CollectiveTrace scaled = ScaleCollectiveTrace(TwoRanks(), 2, TraceScaling::kNone);
  EXPECT_EQ(scaled.nranks, 2);
  EXPECT_EQ(scaled.ranks[1][1].start_ns, 25u);
}

TEST(TraceScaling, FixedTotalKeepsEverySizeAndCopiesRanksRoundRobin) {
  const CollectiveTrace scaled = ScaleCollectiveTrace(TwoRanks(), 5, TraceScaling::kFixedTotal);
  ASSERT_EQ(scaled.nranks, 5);
  ASSERT_EQ(scaled.ranks.size(), 5u);
  for (int r = 0; r < 5; ++r) {
    const auto& collectives = scaled.ranks[static_cast<size_t>(r)];
    ASSERT_EQ(collectives.size(), 4u);
    EXPECT_EQ(collectives[0].bytes, 64u);
    EXPECT_EQ(collectives[1].bytes, 80u) << "the gathered tensor stays; each shard is 16";
    EXPECT_EQ(collectives[2].bytes, 24u);
    EXPECT_EQ(collectives[3].bytes, 8u);
    EXPECT_EQ(collectives[3].root, 1);
    // Ranks 1 and 3 run recorded rank 1's timeline, 0, 2 and 4 rank 0's.
    EXPECT_EQ(collectives[1].start_ns, r % 2 == 1 ? 25u : 20u) << "rank " << r;
  }
}

TEST(TraceScaling, FixedPerRankGrowsGatheredCollectivesByRanks) {
  const CollectiveTrace scaled = ScaleCollectiveTrace(TwoRanks(), 5, TraceScaling::kFixedPerRank);
  for (const auto& collectives : scaled.ranks) {
    EXPECT_EQ(collectives[0].bytes, 64u) << "all-reduces keep the model's buffer";
    EXPECT_EQ(collectives[1].bytes, 5u * 40) << "5 ranks' parts of 40 bytes";
    EXPECT_EQ(collectives[2].bytes, 5u * 12);
    EXPECT_EQ(collectives[3].bytes, 8u);
  }
  // Scaling down: one rank's part of each.
  const CollectiveTrace down =
      ScaleCollectiveTrace(ScaleCollectiveTrace(TwoRanks(), 4, TraceScaling::kFixedPerRank), 2,
                           TraceScaling::kFixedPerRank);
  EXPECT_EQ(down.ranks[0][1].bytes, 80u) << "4 -> 2 ranks is the recording again";
}

TEST(TraceScaling, RefusesWhatTheRulesCannotScale) {
  try {
    ScaleCollectiveTrace(TwoRanks(), 3, TraceScaling::kNone);
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "two.jsonl: the trace has 2 ranks but the job has 3 (job.world_size; "
                 "workload.trace_scaling scales a trace to another number of ranks)");
  }
  try {
    ScaleCollectiveTrace(TwoRanks(), 1, TraceScaling::kFixedTotal);
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "two.jsonl:7: the Broadcast's root 1 is not a rank of its communicator, of 1 "
                 "ranks in the 1-rank job");
  }
  CollectiveTrace big = TwoRanks();
  for (auto& collectives : big.ranks) collectives[1].bytes = kMaxCollectiveBytes;
  EXPECT_NO_THROW(ScaleCollectiveTrace(big, 4, TraceScaling::kFixedTotal));
  EXPECT_THROW(ScaleCollectiveTrace(big, 4, TraceScaling::kFixedPerRank), TraceError);
  EXPECT_THROW(ScaleCollectiveTrace(TwoRanks(), 0, TraceScaling::kFixedTotal), TraceError);
}

// The hybrid job of collective_trace_test.cc as read: 4 ranks in replicas of 2; tensor pairs
// A = {0, 1} and B = {2, 3}, data pairs C = {0, 2} and D = {1, 3}, the world; every rank
// all-reduces 64 bytes on its tensor pair, all-gathers 16 on its data pair, all-reduces 8 on
// the world.
CollectiveTrace Hybrid() {
  CollectiveTrace trace;
  trace.path = "hybrid.jsonl";
  trace.nranks = 4;
  trace.communicators = {{"0xF", {0, 1, 2, 3}, 13},
                         {"0xA", {0, 1}, 1},
                         {"0xB", {2, 3}, 3},
                         {"0xC", {0, 2}, 5},
                         {"0xD", {1, 3}, 7}};
  const int tensor[] = {1, 1, 2, 2};
  const int data[] = {3, 4, 3, 4};
  trace.ranks.resize(4);
  for (int r = 0; r < 4; ++r) {
    TraceCollective a = Collective(1, CollectiveOp::kAllReduce, 64, 0, 10);
    a.comm = tensor[r];
    TraceCollective g = Collective(5, CollectiveOp::kAllGather, 16, 20 + r, 30);
    g.comm = data[r];
    TraceCollective w = Collective(13, CollectiveOp::kAllReduce, 8, 40, 50);
    trace.ranks[static_cast<size_t>(r)] = {a, g, w};
  }
  return trace;
}

TEST(TraceScaling, ReplicasCopyTheirGroupsAndWidenTheGroupsAcrossThem) {
  const CollectiveTrace scaled =
      ScaleCollectiveTrace(Hybrid(), 8, TraceScaling::kFixedPerRank, /*replica_ranks=*/2);
  ASSERT_EQ(scaled.nranks, 8);
  // The world and the data pairs widened; the tensor pairs copied into the replicas that copy
  // theirs (A's replica 0 into 0 and 2, B's replica 1 into 1 and 3).
  std::vector<std::vector<int>> members;
  for (const TraceCommunicator& comm : scaled.communicators) members.push_back(comm.ranks);
  EXPECT_EQ(
      members,
      (std::vector<std::vector<int>>{
          {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1}, {4, 5}, {2, 3}, {6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Rank 5 is place 1 of replica 2: recorded rank 1's program, on replica 2's tensor pair, the
  // widened data group D and the world; its all-gather grows to 4 parts of 8 bytes.
  const auto& rank5 = scaled.ranks[5];
  ASSERT_EQ(rank5.size(), 3u);
  EXPECT_EQ(rank5[0].comm, 2);
  EXPECT_EQ(rank5[1].comm, 6);
  EXPECT_EQ(rank5[1].bytes, 4u * 8);
  EXPECT_EQ(rank5[1].start_ns, 21u) << "recorded rank 1's times";
  EXPECT_EQ(rank5[2].comm, 0);
  EXPECT_EQ(rank5[2].bytes, 8u);
  // Rank 6 is place 0 of replica 3: recorded rank 2's, on B's copy {6, 7}.
  EXPECT_EQ(scaled.ranks[6][0].comm, 4);
  EXPECT_EQ(scaled.ranks[6][1].comm, 5);
}

TEST(TraceScaling, GroupsThatAreNotWholeReplicasOrTheirProductAreRefused) {
  try {
    ScaleCollectiveTrace(Hybrid(), 8, TraceScaling::kFixedTotal, /*replica_ranks=*/1);
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "hybrid.jsonl:1: communicator 0xA (world ranks 0 1) spans model replicas but is "
                 "not the same places of every replica in rank order: it cannot be scaled by "
                 "replicas of 1 ranks (workload.trace_replica)");
  }
  try {
    ScaleCollectiveTrace(Hybrid(), 6, TraceScaling::kFixedTotal, /*replica_ranks=*/4);
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "hybrid.jsonl: replicas of 4 ranks (workload.trace_replica) must divide both the "
                 "trace's 4 ranks and the job's 6 (job.world_size)");
  }
}

TEST(TraceScaling, NamesAreTheScenarioKeysValues) {
  for (TraceScaling scaling :
       {TraceScaling::kNone, TraceScaling::kFixedTotal, TraceScaling::kFixedPerRank}) {
    EXPECT_EQ(TraceScalingFromString(ToString(scaling)), scaling);
  }
  EXPECT_EQ(ToString(TraceScaling::kFixedTotal), "fixed-total");
  EXPECT_THROW(TraceScalingFromString("weak"), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::work
