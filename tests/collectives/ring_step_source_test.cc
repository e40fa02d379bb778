// RingStepSource against the ring derived the other way: every step added in ring order to a
// RankScheduleBuilder, which finds each step's dependencies from a table of the regions earlier
// steps touched (read after write, write after read, write after write). The source names them
// from closed forms instead; both must give the same schedule, step for step, for every rank.
#include "collectives/ring_step_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collectives/layout.h"
#include "collectives/rank_schedule_builder.h"
#include "collectives/ring_order.h"

namespace nbox::coll {
namespace {

// The ring of ring.cc's file comment, step by step into the region-table builder.
RankSchedule RingFromRegionTable(const CollectiveSpec& spec, int rank) {
  const BlockGrid grid(spec, spec.op == CollectiveOp::kAllReduce ? BlockOrder::kChannelMajor
                                                                 : BlockOrder::kSegmentMajor);
  RankScheduleBuilder builder(rank, spec.bytes, grid.region_count());
  auto add_step = [&](int send_back, int recv_back, bool reduce) {
    for (int channel = 0; channel < spec.channels; ++channel) {
      const RingOrder ring(spec, channel);
      const int position = ring.PositionOf(rank);
      const int send_segment = ring.RankAt(position - send_back);
      const int recv_segment = ring.RankAt(position - recv_back);
      const int send_chunks = grid.chunks(send_segment, channel);
      const int recv_chunks = grid.chunks(recv_segment, channel);
      for (int k = 0; k < std::max(send_chunks, recv_chunks); ++k) {
        if (k < send_chunks) {
          builder.AddSend(ring.RankAt(position + 1), channel, grid.chunk(send_segment, channel, k));
        }
        if (k < recv_chunks) {
          builder.AddRecv(ring.RankAt(position - 1), channel, grid.chunk(recv_segment, channel, k),
                          reduce);
        }
      }
    }
  };
  if (spec.world_size > 1) {
    if (spec.op != CollectiveOp::kAllGather) {
      for (int s = 0; s < spec.world_size - 1; ++s) add_step(1 + s, 2 + s, true);
    }
    if (spec.op != CollectiveOp::kReduceScatter) {
      for (int s = 0; s < spec.world_size - 1; ++s) add_step(s, s + 1, false);
    }
  }
  return std::move(builder).Finish();
}

std::vector<Step> Drain(RingStepSource& source) {
  std::vector<Step> steps;
  size_t batches = 0;
  while (source.NextBatch(steps)) ++batches;
  EXPECT_EQ(source.NextBatch(steps), false);  // stays exhausted
  (void)batches;
  return steps;
}

std::string Describe(const CollectiveSpec& spec, int rank) {
  return std::string(ToString(spec.op)) + " W=" + std::to_string(spec.world_size) +
         " bytes=" + std::to_string(spec.bytes) + " channels=" + std::to_string(spec.channels) +
         " chunk=" + std::to_string(spec.chunk_bytes) + " servers of " +
         std::to_string(spec.ranks_per_server) + " rank " + std::to_string(rank);
}

void ExpectSameSteps(const std::vector<Step>& got, const std::vector<Step>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const Step& a = got[i];
    const Step& b = want[i];
    EXPECT_EQ(a.id, b.id) << what << " step " << i;
    EXPECT_EQ(a.kind, b.kind) << what << " step " << i;
    EXPECT_EQ(a.peer, b.peer) << what << " step " << i;
    EXPECT_EQ(a.channel, b.channel) << what << " step " << i;
    EXPECT_EQ(a.offset, b.offset) << what << " step " << i;
    EXPECT_EQ(a.bytes, b.bytes) << what << " step " << i;
    EXPECT_EQ(a.reduce, b.reduce) << what << " step " << i;
    std::vector<uint32_t> want_deps = b.deps;
    std::vector<uint32_t> got_deps = a.deps;
    std::sort(want_deps.begin(), want_deps.end());
    std::sort(got_deps.begin(), got_deps.end());
    EXPECT_EQ(got_deps, want_deps) << what << " step " << i;
  }
}

TEST(RingStepSource, GivesTheRegionTablesScheduleForEveryRank) {
  int cases = 0;
  for (const CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    for (int world = 1; world <= 9; ++world) {
      for (int servers_of : {0, 2, 3}) {
        if (servers_of > 0 && world % servers_of != 0) continue;
        for (int channels : {1, 2, 3}) {
          // Uneven segments and chunks, a multiple of every cut, and blocks left empty.
          for (const uint64_t elements :
               {uint64_t{1}, uint64_t{7}, uint64_t{360}, uint64_t{1001}}) {
            for (const uint64_t chunk_elements : {uint64_t{0}, uint64_t{5}, uint64_t{64}}) {
              CollectiveSpec spec;
              spec.op = op;
              spec.world_size = world;
              spec.ranks_per_server = servers_of;
              spec.channels = channels;
              spec.element_bytes = 4;
              spec.bytes = elements * 4;
              spec.chunk_bytes = chunk_elements * 4;
              for (int rank = 0; rank < world; ++rank) {
                RingStepSource source(spec, rank);
                ExpectSameSteps(Drain(source), RingFromRegionTable(spec, rank).steps,
                                Describe(spec, rank));
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

// A batch is one ring step: every channel's sends and receives of it, and the next batch's
// sends wait for this one's receives (step_source.h's contract).
TEST(RingStepSource, HandsOutOneRingStepPerBatch) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllReduce;
  spec.world_size = 4;
  spec.channels = 2;
  spec.bytes = 4 * 4 * 2 * 3;  // 3 elements per block
  spec.chunk_bytes = 4;        // 3 chunks per block
  RingStepSource source(spec, 1);
  std::vector<Step> batch;
  int batches = 0;
  uint32_t first_id = 0;
  while (source.NextBatch(batch)) {
    ++batches;
    ASSERT_EQ(batch.size(), 2u * 2 * 3) << "batch " << batches;  // channels x (send + recv) x 3
    for (const Step& step : batch) {
      EXPECT_EQ(step.id, first_id++);
      if (step.kind == StepKind::kSend && batches > 1) {
        ASSERT_EQ(step.deps.size(), 1u);
        EXPECT_GE(step.deps[0], batch.front().id - 12);  // in the batch just before
        EXPECT_LT(step.deps[0], batch.front().id);
      }
    }
    batch.clear();
  }
  EXPECT_EQ(batches, 2 * 3);  // 2 (W - 1) ring steps
}

// Once the steps of the reduce-scatter are retired as complete, the all-gather's receives no
// longer name them; everything else is unchanged.
TEST(RingStepSource, LeavesOutDependenciesOnRetiredSteps) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllReduce;
  spec.world_size = 5;
  spec.channels = 1;
  spec.bytes = 5 * 4;
  RingStepSource source(spec, 0);
  std::vector<Step> steps;
  for (int g = 0; g < 4; ++g) ASSERT_TRUE(source.NextBatch(steps));  // the reduce-scatter
  source.Retire(static_cast<uint32_t>(steps.size()));
  const size_t reduce_scatter = steps.size();
  while (source.NextBatch(steps)) {
  }
  const RankSchedule whole = RingFromRegionTable(spec, 0);
  ASSERT_EQ(steps.size(), whole.steps.size());
  for (size_t i = reduce_scatter; i < steps.size(); ++i) {
    std::vector<uint32_t> kept;
    for (uint32_t dep : whole.steps[i].deps) {
      if (dep >= reduce_scatter) kept.push_back(dep);
    }
    EXPECT_EQ(steps[i].deps, kept) << "step " << i;
  }
}

}  // namespace
}  // namespace nbox::coll
