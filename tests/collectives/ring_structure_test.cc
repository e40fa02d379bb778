// The shape of ring schedules: hand-derived small cases, closed-form step and byte counts,
// the matching rule, and the dependency DAG.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "collectives/schedule.h"
#include "collectives_test_util.h"

namespace nbox::coll {
namespace {

using testing::AllOps;
using testing::PartBegin;
using testing::PartSize;
using testing::Spec;

struct Expected {
  StepKind kind;
  int peer;
  uint64_t offset;
  uint64_t bytes;
  bool reduce;
  std::vector<uint32_t> deps;
};

void ExpectSteps(const RankSchedule& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.steps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const Step& step = got.steps[i];
    EXPECT_EQ(step.id, i);
    EXPECT_EQ(step.kind, want[i].kind);
    EXPECT_EQ(step.peer, want[i].peer);
    EXPECT_EQ(step.channel, 0);
    EXPECT_EQ(step.offset, want[i].offset);
    EXPECT_EQ(step.bytes, want[i].bytes);
    EXPECT_EQ(step.reduce, want[i].reduce);
    EXPECT_EQ(step.deps, want[i].deps);
  }
}

constexpr StepKind kS = StepKind::kSend;
constexpr StepKind kR = StepKind::kRecv;

// Worked by hand: W = 3, three 4-byte segments, rank 0 (next 1, prev 2).
//   reduce-scatter s=0: send seg 2, add seg 1;  s=1: send seg 1 (after adding it), add seg 0
//   all-gather     t=0: send seg 0 (after its last add), receive seg 2 (after seg 2 was sent)
//                  t=1: send seg 2 (after receiving it), receive seg 1 (after seg 1 was sent)
TEST(CollectivesRingStructure, AllReduceThreeRanksByHand) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 3, 12, 1, 0));
  ASSERT_EQ(schedule.ranks.size(), 3u);
  EXPECT_EQ(schedule.ranks[0].buffer_bytes, 12u);
  ExpectSteps(schedule.ranks[0], {{kS, 1, 8, 4, false, {}},
                                  {kR, 2, 4, 4, true, {}},
                                  {kS, 1, 4, 4, false, {1}},
                                  {kR, 2, 0, 4, true, {}},
                                  {kS, 1, 0, 4, false, {3}},
                                  {kR, 2, 8, 4, false, {0}},
                                  {kS, 1, 8, 4, false, {5}},
                                  {kR, 2, 4, 4, false, {2}}});
}

// Worked by hand: all-gather, W = 3, 8-byte segments cut into two 4-byte chunks, rank 1
// (next 2, prev 0). Chunk k of step 1 waits for chunk k of step 0 and nothing else.
TEST(CollectivesRingStructure, ChunkedAllGatherByHand) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllGather, 3, 24, 1, 4));
  ExpectSteps(schedule.ranks[1], {{kS, 2, 8, 4, false, {}},
                                  {kR, 0, 0, 4, false, {}},
                                  {kS, 2, 12, 4, false, {}},
                                  {kR, 0, 4, 4, false, {}},
                                  {kS, 2, 0, 4, false, {1}},
                                  {kR, 0, 16, 4, false, {}},
                                  {kS, 2, 4, 4, false, {3}},
                                  {kR, 0, 20, 4, false, {}}});
}

// Worked by hand: reduce-scatter, W = 2, 10 bytes of 2-byte elements (5 elements: segment 0
// is 3 elements, segment 1 is 2). Rank 0 sends segment 1 and adds segment 0; rank 1 the
// reverse. Two channels cut each segment again: segment 0 -> 2 + 1 elements, segment 1 -> 1 + 1.
TEST(CollectivesRingStructure, UnevenReduceScatterWithChannelsByHand) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kReduceScatter, 2, 10, 2, 0, 2));
  ASSERT_EQ(schedule.ranks[0].steps.size(), 4u);
  const std::vector<std::tuple<StepKind, int, uint64_t, uint64_t>> rank0 = {
      {kS, 0, 6, 2}, {kR, 0, 0, 4}, {kS, 1, 8, 2}, {kR, 1, 4, 2}};
  for (size_t i = 0; i < rank0.size(); ++i) {
    const Step& step = schedule.ranks[0].steps[i];
    EXPECT_EQ(step.kind, std::get<0>(rank0[i])) << i;
    EXPECT_EQ(step.channel, std::get<1>(rank0[i])) << i;
    EXPECT_EQ(step.offset, std::get<2>(rank0[i])) << i;
    EXPECT_EQ(step.bytes, std::get<3>(rank0[i])) << i;
    EXPECT_EQ(step.reduce, step.kind == kR) << i;
    EXPECT_TRUE(step.deps.empty()) << i;
  }
}

TEST(CollectivesRingStructure, RankSegmentsByHand) {
  // 10 elements over 3 ranks: 4, 3, 3.
  const CollectiveSpec spec = Spec(CollectiveOp::kAllGather, 3, 40, 1, 0);
  EXPECT_EQ(RankSegment(spec, 0).offset, 0u);
  EXPECT_EQ(RankSegment(spec, 0).bytes, 16u);
  EXPECT_EQ(RankSegment(spec, 1).offset, 16u);
  EXPECT_EQ(RankSegment(spec, 1).bytes, 12u);
  EXPECT_EQ(RankSegment(spec, 2).offset, 28u);
  EXPECT_EQ(RankSegment(spec, 2).bytes, 12u);
  EXPECT_THROW(RankSegment(spec, 3), std::invalid_argument);
}

TEST(CollectivesRingStructure, SingleRankAndEmptyBuffersHaveNoSteps) {
  for (CollectiveOp op : AllOps()) {
    const Schedule one = BuildSchedule(Spec(op, 1, 4096, 3, 64));
    ASSERT_EQ(one.ranks.size(), 1u);
    EXPECT_EQ(one.ranks[0].rank, 0);
    EXPECT_EQ(one.ranks[0].buffer_bytes, 4096u);
    EXPECT_TRUE(one.ranks[0].steps.empty());
    const Schedule empty = BuildSchedule(Spec(op, 5, 0, 2, 0));
    ASSERT_EQ(empty.ranks.size(), 5u);
    for (const RankSchedule& rank : empty.ranks) EXPECT_TRUE(rank.steps.empty());
  }
}

// With S = W * channels * 4 * m bytes every block is m elements, so per rank and phase the
// ring sends (W-1) * channels * ceil(4m / chunk) messages carrying (W-1)/W * S bytes: all-reduce
// (two phases) 2(W-1)/W * S, all-gather and reduce-scatter (W-1)/W * S.
TEST(CollectivesRingStructure, EvenSizesMatchClosedForms) {
  constexpr uint64_t kElementsPerBlock = 6;
  for (CollectiveOp op : AllOps()) {
    const uint64_t phases = op == CollectiveOp::kAllReduce ? 2 : 1;
    for (int world : {2, 3, 4, 5, 8}) {
      for (int channels : {1, 2, 3, 4}) {
        for (uint64_t chunk : {0, 4, 8, 12, 20, 1000}) {
          SCOPED_TRACE(std::string(ToString(op)) + " W=" + std::to_string(world) +
                       " channels=" + std::to_string(channels) + " chunk=" + std::to_string(chunk));
          const uint64_t block_bytes = 4 * kElementsPerBlock;
          const uint64_t bytes = world * channels * block_bytes;
          const uint64_t chunks_per_block = chunk == 0 ? 1 : (block_bytes + chunk - 1) / chunk;
          const uint64_t messages = phases * (world - 1) * channels * chunks_per_block;
          const Schedule schedule = BuildSchedule(Spec(op, world, bytes, channels, chunk));
          for (const RankSchedule& rank : schedule.ranks) {
            uint64_t sends = 0, recvs = 0, sent = 0, received = 0;
            for (const Step& step : rank.steps) {
              if (chunk != 0) {
                EXPECT_LE(step.bytes, chunk);
              }
              EXPECT_EQ(step.bytes % 4, 0u);
              EXPECT_EQ(step.offset % 4, 0u);
              (step.kind == kS ? sends : recvs) += 1;
              (step.kind == kS ? sent : received) += step.bytes;
            }
            EXPECT_EQ(sends, messages);
            EXPECT_EQ(recvs, messages);
            EXPECT_EQ(sent * world, phases * (world - 1) * bytes);
            EXPECT_EQ(received * world, phases * (world - 1) * bytes);
          }
        }
      }
    }
  }
}

// Sizes that do not divide evenly. All-gather rank r sends every segment but r+1's and
// receives every segment but its own; reduce-scatter sends every segment but its own and
// receives every segment but r-1's. All-reduce does both per channel slice.
TEST(CollectivesRingStructure, UnevenSizesMatchSegmentSums) {
  for (int world : {2, 3, 5, 7}) {
    for (int channels : {1, 3, 4}) {
      for (uint64_t elements : {1, 5, 29, 103}) {
        for (uint64_t chunk : {0, 8, 12}) {
          SCOPED_TRACE("W=" + std::to_string(world) + " channels=" + std::to_string(channels) +
                       " elements=" + std::to_string(elements) + " chunk=" + std::to_string(chunk));
          const uint64_t bytes = 4 * elements;
          auto segment = [&](int r) { return 4 * PartSize(elements, world, (r + world) % world); };
          auto slice_segment = [&](int c, int r) {
            return 4 * PartSize(PartSize(elements, channels, c), world, (r + world) % world);
          };
          for (CollectiveOp op : AllOps()) {
            const Schedule schedule = BuildSchedule(Spec(op, world, bytes, channels, chunk));
            for (int r = 0; r < world; ++r) {
              uint64_t sent = 0, received = 0;
              for (const Step& step : schedule.ranks[r].steps) {
                EXPECT_GT(step.bytes, 0u);
                (step.kind == kS ? sent : received) += step.bytes;
              }
              uint64_t want_sent = 0, want_received = 0;
              if (op == CollectiveOp::kAllGather) {
                want_sent = bytes - segment(r + 1);
                want_received = bytes - segment(r);
              } else if (op == CollectiveOp::kReduceScatter) {
                want_sent = bytes - segment(r);
                want_received = bytes - segment(r - 1);
              } else {
                for (int c = 0; c < channels; ++c) {
                  const uint64_t slice = 4 * PartSize(elements, channels, c);
                  want_sent += 2 * slice - slice_segment(c, r) - slice_segment(c, r + 1);
                  want_received += 2 * slice - slice_segment(c, r - 1) - slice_segment(c, r);
                }
              }
              EXPECT_EQ(sent, want_sent) << "rank " << r << " " << ToString(op);
              EXPECT_EQ(received, want_received) << "rank " << r << " " << ToString(op);
            }
          }
        }
      }
    }
  }
}

// All-gather: rank r's Recvs overwrite every byte outside its own segment exactly once and
// never touch its own segment; reduce-scatter: rank r's Recvs add into every byte of its own
// segment exactly once (its result is complete).
TEST(CollectivesRingStructure, RecvsCoverTheRightBytes) {
  for (int world : {2, 3, 6}) {
    for (int channels : {1, 2, 4}) {
      for (uint64_t chunk : {0, 8}) {
        const uint64_t elements = 7 * world + 3;
        for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
          const Schedule schedule = BuildSchedule(Spec(op, world, 4 * elements, channels, chunk));
          for (int r = 0; r < world; ++r) {
            std::vector<int> writes(4 * elements, 0);
            for (const Step& step : schedule.ranks[r].steps) {
              if (step.kind != kR) continue;
              EXPECT_EQ(step.reduce, op == CollectiveOp::kReduceScatter);
              for (uint64_t b = step.offset; b < step.offset + step.bytes; ++b) ++writes[b];
            }
            const uint64_t own_begin = 4 * PartBegin(elements, world, r);
            const uint64_t own_end = own_begin + 4 * PartSize(elements, world, r);
            for (uint64_t b = 0; b < writes.size(); ++b) {
              const bool own = b >= own_begin && b < own_end;
              if (op == CollectiveOp::kAllGather) {
                EXPECT_EQ(writes[b], own ? 0 : 1) << "rank " << r << " byte " << b;
              } else if (own) {
                EXPECT_EQ(writes[b], 1) << "rank " << r << " byte " << b;
              }
            }
          }
        }
      }
    }
  }
}

// The matching rule: on every connection the n-th Send and the n-th Recv have the same size;
// every byte sent is received (conservation).
TEST(CollectivesRingStructure, SendsAndRecvsMatchPerConnection) {
  for (CollectiveOp op : AllOps()) {
    for (int world : {2, 3, 4, 9}) {
      for (int channels : {1, 2, 4}) {
        for (uint64_t chunk : {0, 4, 12}) {
          const uint64_t bytes = 4 * (11 * world + 5);
          const Schedule schedule = BuildSchedule(Spec(op, world, bytes, channels, chunk));
          using Key = std::tuple<int, int, int>;  // src, dst, channel
          std::map<Key, std::vector<uint64_t>> sends, recvs;
          uint64_t total_sent = 0, total_received = 0;
          for (const RankSchedule& rank : schedule.ranks) {
            for (const Step& step : rank.steps) {
              EXPECT_GE(step.channel, 0);
              EXPECT_LT(step.channel, channels);
              EXPECT_NE(step.peer, rank.rank);
              if (step.kind == kS) {
                sends[{rank.rank, step.peer, step.channel}].push_back(step.bytes);
                total_sent += step.bytes;
              } else {
                recvs[{step.peer, rank.rank, step.channel}].push_back(step.bytes);
                total_received += step.bytes;
              }
            }
          }
          EXPECT_EQ(sends, recvs) << ToString(op) << " W=" << world << " ch=" << channels;
          EXPECT_EQ(total_sent, total_received);
          // A ring only talks to its neighbours.
          for (const auto& [key, sizes] : sends) {
            EXPECT_EQ(std::get<1>(key), (std::get<0>(key) + 1) % world);
          }
        }
      }
    }
  }
}

// Dependencies name earlier-existing steps, form a DAG, and are only the data hazards of a
// ring: a Send waits for the one Recv that filled its region, a Recv for the one Send that
// last read its region. So each step has at most one dependency, on the very same region,
// of the other kind — which is also why chunks pipeline.
TEST(CollectivesRingStructure, DependenciesAreAcyclicHazardsOnTheSameRegion) {
  for (CollectiveOp op : AllOps()) {
    for (int world : {2, 3, 5, 8}) {
      for (int channels : {1, 3}) {
        for (uint64_t chunk : {0, 4, 20}) {
          const uint64_t bytes = 4 * (9 * world * channels + 7);
          const Schedule schedule = BuildSchedule(Spec(op, world, bytes, channels, chunk));
          for (const RankSchedule& rank : schedule.ranks) {
            const size_t n = rank.steps.size();
            std::vector<int> indegree(n, 0);
            std::vector<std::vector<uint32_t>> waiters(n);
            for (const Step& step : rank.steps) {
              EXPECT_LE(step.deps.size(), 1u);
              for (uint32_t dep : step.deps) {
                ASSERT_LT(dep, n);
                ASSERT_NE(dep, step.id);
                const Step& before = rank.steps[dep];
                EXPECT_NE(before.kind, step.kind);
                EXPECT_EQ(before.offset, step.offset);
                EXPECT_EQ(before.bytes, step.bytes);
                ++indegree[step.id];
                waiters[dep].push_back(step.id);
              }
            }
            // Kahn: every step must come out if the graph is acyclic.
            std::vector<uint32_t> frontier;
            for (uint32_t i = 0; i < n; ++i) {
              if (indegree[i] == 0) frontier.push_back(i);
            }
            size_t visited = 0;
            while (!frontier.empty()) {
              const uint32_t id = frontier.back();
              frontier.pop_back();
              ++visited;
              for (uint32_t w : waiters[id]) {
                if (--indegree[w] == 0) frontier.push_back(w);
              }
            }
            EXPECT_EQ(visited, n);
          }
        }
      }
    }
  }
}

// Each Send of a region other than the rank's starting data waits for its Recv: per rank and
// phase, the Sends without dependencies are exactly those of the first ring step
// (channels * chunks of one block, when blocks are even).
TEST(CollectivesRingStructure, OnlyFirstStepSendsAreFree) {
  for (CollectiveOp op : AllOps()) {
    for (int world : {2, 4, 7}) {
      const int channels = 2;
      const uint64_t chunk = 8;  // blocks of 5 elements = 20 bytes -> 3 chunks
      const Schedule schedule =
          BuildSchedule(Spec(op, world, 20 * world * channels, channels, chunk));
      for (const RankSchedule& rank : schedule.ranks) {
        int free_sends = 0;
        for (const Step& step : rank.steps) {
          if (step.kind == kS && step.deps.empty()) ++free_sends;
        }
        EXPECT_EQ(free_sends, channels * 3) << ToString(op) << " W=" << world;
      }
    }
  }
}

TEST(CollectivesRingStructure, RankScheduleEqualsTheWholeSchedulesRank) {
  const CollectiveSpec spec = Spec(CollectiveOp::kAllReduce, 5, 4 * 77, 3, 12);
  const Schedule schedule = BuildSchedule(spec);
  for (int r = 0; r < 5; ++r) {
    const RankSchedule one = BuildRankSchedule(spec, r);
    ASSERT_EQ(one.steps.size(), schedule.ranks[r].steps.size());
    EXPECT_EQ(one.rank, r);
    for (size_t i = 0; i < one.steps.size(); ++i) {
      const Step& a = one.steps[i];
      const Step& b = schedule.ranks[r].steps[i];
      EXPECT_TRUE(a.kind == b.kind && a.peer == b.peer && a.channel == b.channel &&
                  a.offset == b.offset && a.bytes == b.bytes && a.reduce == b.reduce &&
                  a.deps == b.deps)
          << "rank " << r << " step " << i;
    }
  }
  EXPECT_THROW(BuildRankSchedule(spec, 5), std::invalid_argument);
  EXPECT_THROW(BuildRankSchedule(spec, -1), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::coll
