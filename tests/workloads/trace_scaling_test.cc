// ScaleCollectiveTrace against its rules (workloads/trace_scaling.h), on a two-rank trace made
// here; every expected size is worked out by hand.
#include "workloads/trace_scaling.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

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
  trace.comm = "0x0000000000000001";
  trace.nranks = 2;
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
                 "two.jsonl:7: the Broadcast's root 1 is not a rank of the 1-rank job");
  }
  CollectiveTrace big = TwoRanks();
  for (auto& collectives : big.ranks) collectives[1].bytes = kMaxCollectiveBytes;
  EXPECT_NO_THROW(ScaleCollectiveTrace(big, 4, TraceScaling::kFixedTotal));
  EXPECT_THROW(ScaleCollectiveTrace(big, 4, TraceScaling::kFixedPerRank), TraceError);
  EXPECT_THROW(ScaleCollectiveTrace(TwoRanks(), 0, TraceScaling::kFixedTotal), TraceError);
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
