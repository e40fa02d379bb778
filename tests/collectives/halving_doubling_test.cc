// Recursive halving and doubling (halving_doubling.h): the serial result on real buffers under
// random interleavings for powers of two and the folded sizes between them; the bytes and
// partners of every round against Thakur, Rabenseifner and Gropp's closed forms; and the specs
// it refuses.
#include "collectives/halving_doubling.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::CheckRun;

CollectiveSpec HalvingDoubling(CollectiveOp op, int world, uint64_t bytes, int channels,
                               uint64_t chunk, uint32_t element_bytes = 4) {
  CollectiveSpec spec = testing::Spec(op, world, bytes, channels, chunk, element_bytes);
  spec.algorithm = Algorithm::kHalvingDoubling;
  return spec;
}

template <typename T>
class CollectivesHalvingDoublingNumeric : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, int32_t>;
TYPED_TEST_SUITE(CollectivesHalvingDoublingNumeric, ElementTypes);

// 1..9 ranks (powers of two and every folded size up to 9), 1 or 2 channels, sizes that divide
// and that do not (down to fewer elements than ranks), with and without chunking, three
// interleavings each, for the three operations.
TYPED_TEST(CollectivesHalvingDoublingNumeric, MatchesTheSerialResult) {
  using T = TypeParam;
  int runs = 0;
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    for (int world = 1; world <= 9; ++world) {
      for (int channels : {1, 2}) {
        const uint64_t even = 2 * world * channels;
        for (uint64_t elements : {uint64_t{3}, even, 3 * even + 5}) {
          for (uint64_t chunk : {uint64_t{0}, 2 * sizeof(T)}) {
            const Schedule schedule = BuildSchedule(
                HalvingDoubling(op, world, elements * sizeof(T), channels, chunk, sizeof(T)));
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
  EXPECT_EQ(runs, 3 * 9 * 2 * 3 * 2 * 3);
}

// Bytes a rank sends to each peer, over the whole collective.
std::map<int, uint64_t> SentByPeer(const RankSchedule& rank) {
  std::map<int, uint64_t> sent;
  for (const Step& step : rank.steps) {
    if (step.kind == StepKind::kSend) sent[step.peer] += step.bytes;
  }
  return sent;
}

// W = 8, 8 x 1000 bytes (segments of 1000): recursive halving sends B/2, B/4, B/8 to the
// ranks at distance 4, 2, 1 (XOR); recursive doubling sends B/8, B/4, B/2 to the ranks at
// distance 1, 2, 4; the all-reduce both, to the same partners: 2(W-1)/W B in 2 log2 W hops.
TEST(HalvingDoublingStructure, PowerOfTwoRoundsHalveAndDouble) {
  const int world = 8;
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    const uint64_t phases = op == CollectiveOp::kAllReduce ? 2 : 1;
    const Schedule schedule = BuildSchedule(HalvingDoubling(op, world, 8 * 1000, 2, 256));
    for (const RankSchedule& rank : schedule.ranks) {
      const std::map<int, uint64_t> expected = {{rank.rank ^ 4, phases * 4000},
                                                {rank.rank ^ 2, phases * 2000},
                                                {rank.rank ^ 1, phases * 1000}};
      EXPECT_EQ(SentByPeer(rank), expected) << ToString(op) << " rank " << rank.rank;
    }
  }
}

// W = 6: P = 4, ranks 0 and 2 fold into 1 and 3. Virtual ranks 0..3 are ranks 1, 3, 4, 5 and
// own segments {0, 1}, {2, 3}, {4}, {5}. A folded rank sends its whole buffer and receives the
// whole result. Rank 1 (virtual 0) halves by giving virtual 2 and 3's segments {4, 5} to rank 4
// and virtual 1's {2, 3} to rank 3, then doubles by sending {0, 1} to rank 3 and {0..3} to
// rank 4.
TEST(HalvingDoublingStructure, NonPowerOfTwoFoldsTheFirstEvenRanks) {
  const uint64_t segment = 1200;
  const Schedule schedule =
      BuildSchedule(HalvingDoubling(CollectiveOp::kAllReduce, 6, 6 * segment, 1, 0));
  const uint64_t buffer = 6 * segment;
  EXPECT_EQ(SentByPeer(schedule.ranks[0]), (std::map<int, uint64_t>{{1, buffer}}));
  EXPECT_EQ(SentByPeer(schedule.ranks[2]), (std::map<int, uint64_t>{{3, buffer}}));
  EXPECT_EQ(SentByPeer(schedule.ranks[1]),
            (std::map<int, uint64_t>{{0, buffer}, {4, 6 * segment}, {3, 4 * segment}}));
  // Rank 5 (virtual 3) gives virtual 0 and 1's four segments to rank 3 (virtual 1), gives
  // segment 4 to rank 4 (virtual 2), and sends back what it holds: segment 5, then 4 and 5.
  EXPECT_EQ(SentByPeer(schedule.ranks[5]),
            (std::map<int, uint64_t>{{3, 4 * segment + 2 * segment}, {4, segment + segment}}));
  // Reduce-scatter hands a folded rank its own segment only; all-gather every other one.
  const Schedule scatter =
      BuildSchedule(HalvingDoubling(CollectiveOp::kReduceScatter, 6, 6 * segment, 1, 0));
  EXPECT_EQ(SentByPeer(scatter.ranks[0]), (std::map<int, uint64_t>{{1, buffer}}));
  EXPECT_EQ(SentByPeer(scatter.ranks[1]).at(0), segment);
  const Schedule gather =
      BuildSchedule(HalvingDoubling(CollectiveOp::kAllGather, 6, 6 * segment, 1, 0));
  EXPECT_EQ(SentByPeer(gather.ranks[0]), (std::map<int, uint64_t>{{1, segment}}));
  EXPECT_EQ(SentByPeer(gather.ranks[1]).at(0), 5 * segment);
}

TEST(HalvingDoublingStructure, FoldingMapsRanksAsThePaperDoes) {
  const HalvingDoublingRanks six(6);
  EXPECT_EQ(six.virtual_ranks(), 4);
  EXPECT_EQ(six.rounds(), 2);
  EXPECT_EQ(six.VirtualOf(0), -1);
  EXPECT_EQ(six.VirtualOf(1), 0);
  EXPECT_EQ(six.VirtualOf(2), -1);
  EXPECT_EQ(six.VirtualOf(3), 1);
  EXPECT_EQ(six.VirtualOf(5), 3);
  for (int v = 0; v < 4; ++v) EXPECT_EQ(six.VirtualOf(six.RankOf(v)), v);
  EXPECT_EQ(six.FoldedInto(3), 2);
  EXPECT_EQ(six.FoldedInto(4), -1);
  const HalvingDoublingRanks sixteen(16);
  EXPECT_EQ(sixteen.virtual_ranks(), 16);
  EXPECT_EQ(sixteen.rounds(), 4);
  EXPECT_EQ(sixteen.FoldedInto(1), -1);
}

TEST(HalvingDoublingStructure, BroadcastAndAllToAllAreRefused) {
  for (CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kAllToAll}) {
    EXPECT_THROW(BuildSchedule(HalvingDoubling(op, 4, 64, 1, 0)), std::invalid_argument);
  }
  EXPECT_EQ(ToString(Algorithm::kHalvingDoubling), "HalvingDoubling");
}

}  // namespace
}  // namespace nbox::coll
