// Direct all-reduce, reduce-scatter and all-gather (direct.h): the serial result on real
// buffers under random interleavings, the ring's bytes per rank spread over every peer, one
// message hop per phase, and the specs it refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::CheckRun;

CollectiveSpec Direct(CollectiveOp op, int world, uint64_t bytes, int channels, uint64_t chunk,
                      uint32_t element_bytes = 4) {
  CollectiveSpec spec = testing::Spec(op, world, bytes, channels, chunk, element_bytes);
  spec.algorithm = Algorithm::kDirect;
  return spec;
}

template <typename T>
class CollectivesDirectNumeric : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, int32_t>;
TYPED_TEST_SUITE(CollectivesDirectNumeric, ElementTypes);

// 1..6 ranks, 1 or 2 channels, sizes that divide and that do not (down to fewer elements than
// ranks), with and without chunking, three interleavings each, for the three operations.
TYPED_TEST(CollectivesDirectNumeric, MatchesTheSerialResult) {
  using T = TypeParam;
  int runs = 0;
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    for (int world = 1; world <= 6; ++world) {
      for (int channels : {1, 2}) {
        const uint64_t even = 2 * world * channels;
        for (uint64_t elements : {uint64_t{3}, even, 3 * even + 5}) {
          for (uint64_t chunk : {uint64_t{0}, 2 * sizeof(T)}) {
            const Schedule schedule =
                BuildSchedule(Direct(op, world, elements * sizeof(T), channels, chunk, sizeof(T)));
            for (uint64_t seed = 0; seed < 3; ++seed) {
              ASSERT_EQ(CheckRun<T>(schedule, seed, elements + world), "")
                  << ToString(op) << " W=" << world << " channels=" << channels
                  << " elements=" << elements << " chunk=" << chunk;
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 3 * 6 * 2 * 3 * 2 * 3);
}

// Every rank sends what it would on the ring, (W-1)/W of the buffer per phase (8 ranks,
// 8 x 1000 bytes: 7000 per phase), spread evenly over its 7 peers, each reached by one
// connection per channel: no message is forwarded.
TEST(DirectStructure, RingBytesSpreadOverEveryPeer) {
  const int world = 8;
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    const uint64_t phases = op == CollectiveOp::kAllReduce ? 2 : 1;
    const Schedule schedule = BuildSchedule(Direct(op, world, 8 * 1000, 2, 256));
    for (const RankSchedule& rank : schedule.ranks) {
      uint64_t sent = 0;
      std::set<int> peers;
      for (const Step& step : rank.steps) {
        if (step.kind != StepKind::kSend) continue;
        sent += step.bytes;
        peers.insert(step.peer);
        EXPECT_NE(step.peer, rank.rank);
      }
      EXPECT_EQ(sent, phases * 7000) << ToString(op) << " rank " << rank.rank;
      EXPECT_EQ(peers.size(), 7u);
    }
  }
}

// An all-gather send waits for nothing (the rank's own data); an all-reduce's all-gather
// send of a chunk waits for that chunk's last addend: one message hop per phase.
TEST(DirectStructure, AllGatherSendsWaitOnlyForTheirChunksSum) {
  const Schedule gather = BuildSchedule(Direct(CollectiveOp::kAllGather, 4, 4 * 16, 1, 0));
  for (const Step& step : gather.ranks[1].steps) {
    if (step.kind == StepKind::kSend) {
      EXPECT_TRUE(step.deps.empty());
    }
  }
  const Schedule reduce = BuildSchedule(Direct(CollectiveOp::kAllReduce, 4, 4 * 16, 1, 0));
  const RankSchedule& rank = reduce.ranks[1];
  int waiting_sends = 0;
  for (const Step& step : rank.steps) {
    if (step.kind != StepKind::kSend || step.deps.empty()) continue;
    ++waiting_sends;
    ASSERT_EQ(step.deps.size(), 1u);
    const Step& sum = rank.steps[step.deps[0]];
    EXPECT_EQ(sum.kind, StepKind::kRecv);
    EXPECT_TRUE(sum.reduce);
  }
  EXPECT_EQ(waiting_sends, 3);  // the own segment to each of the 3 peers
}

TEST(DirectStructure, BroadcastIsRefused) {
  CollectiveSpec spec = Direct(CollectiveOp::kBroadcast, 4, 64, 1, 0);
  EXPECT_THROW(BuildSchedule(spec), std::invalid_argument);
  EXPECT_EQ(ToString(Algorithm::kDirect), "Direct");
}

}  // namespace
}  // namespace nbox::coll
