// All-to-all (uniform and -v) and point-to-point transfer schedules: run on real buffers by the
// reference executor in random interleavings, every rank's receive buffer must hold, block by
// block, what each peer's send buffer held for it; bytes on the wire are what the sizes say.
#include "collectives/all_to_all.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectives/point_to_point.h"
#include "collectives/reference_executor.h"
#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::InputValue;

constexpr uint64_t kElement = sizeof(int32_t);

// A seeded size matrix in elements (zeros included), as bytes.
std::shared_ptr<const std::vector<uint64_t>> RandomCounts(int world, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto counts = std::make_shared<std::vector<uint64_t>>();
  for (int i = 0; i < world * world; ++i) counts->push_back((rng() % 7) * kElement);
  return counts;
}

CollectiveSpec AllToAllSpec(int world, int channels, uint64_t chunk, uint64_t bytes,
                            std::shared_ptr<const std::vector<uint64_t>> counts) {
  CollectiveSpec spec;
  spec.op = counts ? CollectiveOp::kAllToAllV : CollectiveOp::kAllToAll;
  spec.algorithm = Algorithm::kDirect;
  spec.world_size = world;
  spec.bytes = counts ? 0 : bytes;
  spec.channels = channels;
  spec.chunk_bytes = chunk;
  spec.element_bytes = kElement;
  spec.counts = std::move(counts);
  return spec;
}

// Elements src sends to dst, restated from the size conventions of schedule.h.
uint64_t BlockElements(const CollectiveSpec& spec, int src, int dst) {
  if (spec.counts) return (*spec.counts)[src * spec.world_size + dst] / kElement;
  return testing::PartSize(spec.bytes / kElement, spec.world_size, dst);
}

// Runs `spec` and returns "" when every receive block holds its sender's block (and, for the
// direct algorithm, every rank sent exactly its blocks).
std::string CheckAllToAll(const CollectiveSpec& spec, uint64_t seed) {
  const Schedule schedule = BuildSchedule(spec);
  const int world = spec.world_size;
  std::vector<std::vector<int32_t>> buffers(world);
  std::vector<uint64_t> send_elements(world, 0);
  for (int r = 0; r < world; ++r) {
    for (int d = 0; d < world; ++d) send_elements[r] += BlockElements(spec, r, d);
    buffers[r].assign(schedule.ranks[r].buffer_bytes / kElement, -1);
    for (uint64_t i = 0; i < send_elements[r]; ++i) buffers[r][i] = InputValue<int32_t>(r, i, 3);
  }
  // A rank's own block is a local copy, outside the schedule: make it as NCCL would.
  for (int r = 0; r < world; ++r) {
    uint64_t own_send = 0;
    for (int d = 0; d < r; ++d) own_send += BlockElements(spec, r, d);
    uint64_t own_recv = send_elements[r];
    for (int s = 0; s < r; ++s) own_recv += BlockElements(spec, s, r);
    for (uint64_t i = 0; i < BlockElements(spec, r, r); ++i) {
      buffers[r][own_recv + i] = buffers[r][own_send + i];
    }
  }
  const ExecutionReport report = ExecuteSchedule<int32_t>(schedule, buffers, seed);
  for (int r = 0; r < world; ++r) {
    uint64_t recv_at = send_elements[r];
    uint64_t sent = 0;
    for (int s = 0; s < world; ++s) {
      uint64_t send_at = 0;  // where s's block for r starts in s's send buffer
      for (int d = 0; d < r; ++d) send_at += BlockElements(spec, s, d);
      for (uint64_t i = 0; i < BlockElements(spec, s, r); ++i) {
        const int32_t want = InputValue<int32_t>(s, send_at + i, 3);
        if (buffers[r][recv_at + i] != want) {
          return "W=" + std::to_string(world) + " channels=" + std::to_string(spec.channels) +
                 " seed=" + std::to_string(seed) + ": rank " + std::to_string(r) + " element " +
                 std::to_string(i) + " of the block from " + std::to_string(s) + " is " +
                 std::to_string(buffers[r][recv_at + i]) + ", expected " + std::to_string(want);
        }
      }
      recv_at += BlockElements(spec, s, r);
      if (s != r) sent += BlockElements(spec, r, s) * kElement;
    }
    if (spec.algorithm == Algorithm::kDirect && report.ranks[r].bytes_sent != sent) {
      return "rank " + std::to_string(r) + " sent " + std::to_string(report.ranks[r].bytes_sent) +
             " bytes, expected " + std::to_string(sent);
    }
  }
  return "";
}

TEST(AllToAll, UniformMovesEveryBlockToItsRank) {
  for (int world = 1; world <= 7; ++world) {
    for (int channels = 1; channels <= 3; ++channels) {
      for (uint64_t elements : {uint64_t{1}, uint64_t{3} * world, uint64_t{5} * world + 2}) {
        for (uint64_t chunk : {uint64_t{0}, 2 * kElement}) {
          for (uint64_t seed = 0; seed < 3; ++seed) {
            const auto spec = AllToAllSpec(world, channels, chunk, elements * kElement, nullptr);
            ASSERT_EQ(CheckAllToAll(spec, seed), "");
          }
        }
      }
    }
  }
}

TEST(AllToAll, VariableSizesIncludingEmptyBlocks) {
  for (int world = 1; world <= 6; ++world) {
    for (int channels : {1, 2}) {
      for (uint64_t chunk : {uint64_t{0}, kElement}) {
        for (uint64_t seed = 0; seed < 5; ++seed) {
          const auto spec = AllToAllSpec(world, channels, chunk, 0, RandomCounts(world, seed));
          ASSERT_EQ(CheckAllToAll(spec, seed), "");
        }
      }
    }
  }
}

TEST(AllToAll, OneMessagePerPeerAndChannelWithoutChunking) {
  // W = 4, 2 channels, 8 elements to each peer: 3 peers x 2 channels messages each way.
  const auto spec = AllToAllSpec(4, 2, 0, 4 * 8 * kElement, nullptr);
  const Schedule schedule = BuildSchedule(spec);
  for (const RankSchedule& rank : schedule.ranks) {
    int sends = 0;
    for (const Step& step : rank.steps) {
      sends += step.kind == StepKind::kSend ? 1 : 0;
      EXPECT_TRUE(step.deps.empty()) << "every block moves at once";
      EXPECT_EQ(step.bytes, 4 * kElement);
    }
    EXPECT_EQ(sends, 6);
    EXPECT_EQ(rank.steps.size(), 12u);
  }
  EXPECT_EQ(AllToAllBytesSent(spec, 0), 3 * 8 * kElement);
}

TEST(AllToAll, SpecErrorsNameTheField) {
  auto expect_error = [](const CollectiveSpec& spec, const std::string& field) {
    try {
      ValidateSpec(spec);
      ADD_FAILURE() << "accepted a bad spec, expected an error naming " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("CollectiveSpec." + field), std::string::npos)
          << e.what();
    }
  };
  CollectiveSpec no_counts = AllToAllSpec(3, 1, 0, 0, nullptr);
  no_counts.op = CollectiveOp::kAllToAllV;
  expect_error(no_counts, "counts");
  expect_error(AllToAllSpec(3, 1, 0, 0, RandomCounts(2, 1)), "counts");
  CollectiveSpec with_bytes = AllToAllSpec(2, 1, 0, 0, RandomCounts(2, 1));
  with_bytes.bytes = 8;
  expect_error(with_bytes, "bytes");
  CollectiveSpec ring = AllToAllSpec(2, 1, 0, 8, nullptr);
  ring.algorithm = Algorithm::kRing;
  expect_error(ring, "algorithm");
  CollectiveSpec direct_broadcast = testing::Spec(CollectiveOp::kBroadcast, 2, 8, 1, 0);
  direct_broadcast.algorithm = Algorithm::kDirect;
  expect_error(direct_broadcast, "algorithm");
  auto odd = std::make_shared<std::vector<uint64_t>>(4, kElement);
  (*odd)[1] = 3;
  expect_error(AllToAllSpec(2, 1, 0, 0, odd), "counts");
}

CollectiveSpec Hierarchical(CollectiveSpec spec, int gpus) {
  spec.algorithm = Algorithm::kHierarchical;
  spec.ranks_per_server = gpus;
  return spec;
}

TEST(HierarchicalAllToAll, MovesEveryBlockToItsRank) {
  for (const auto& [servers, gpus] :
       std::vector<std::pair<int, int>>{{2, 2}, {3, 2}, {2, 3}, {2, 4}, {1, 4}, {4, 1}}) {
    const int world = servers * gpus;
    for (int channels : {1, 2}) {
      for (uint64_t chunk : {uint64_t{0}, kElement}) {
        for (uint64_t seed = 0; seed < 3; ++seed) {
          ASSERT_EQ(CheckAllToAll(Hierarchical(AllToAllSpec(world, channels, chunk,
                                                            (3 * world + 1) * kElement, nullptr),
                                               gpus),
                                  seed),
                    "")
              << servers << " servers of " << gpus;
          ASSERT_EQ(CheckAllToAll(Hierarchical(AllToAllSpec(world, channels, chunk, 0,
                                                            RandomCounts(world, seed)),
                                               gpus),
                                  seed),
                    "")
              << servers << " servers of " << gpus;
        }
      }
    }
  }
}

TEST(HierarchicalAllToAll, OnlyRailAlignedTrafficLeavesAServer) {
  // 3 servers of 4: a message leaves its server only between GPUs of the same local index,
  // and each rank talks across servers with S - 1 = 2 peers instead of 8.
  const int gpus = 4;
  const auto spec = Hierarchical(AllToAllSpec(12, 1, 0, 12 * 4 * kElement, nullptr), gpus);
  const Schedule schedule = BuildSchedule(spec);
  for (const RankSchedule& rank : schedule.ranks) {
    std::set<int> remote;
    for (const Step& step : rank.steps) {
      if (step.peer / gpus == rank.rank / gpus) continue;
      EXPECT_EQ(step.peer % gpus, rank.rank % gpus) << "rank " << rank.rank << " to " << step.peer;
      remote.insert(step.peer);
    }
    EXPECT_EQ(remote.size(), 2u);
  }
}

// AllToAllSenderOffset names where every received or relayed byte was sent from: after a
// run where element i of rank r's send buffer holds r * 100000 + i, every element a Recv step
// wrote holds src * 100000 + AllToAllSenderOffset / 4 for some sender src (its value says which);
// the own send buffer is refused.
TEST(AllToAllSenderOffset, NamesWhereEveryReceivedByteWasSent) {
  for (Algorithm algorithm : {Algorithm::kDirect, Algorithm::kHierarchical}) {
    CollectiveSpec spec = AllToAllSpec(6, 2, 8, kElement * 6 * 5, nullptr);
    spec.algorithm = algorithm;
    spec.ranks_per_server = 2;
    const Schedule schedule = BuildSchedule(spec);
    std::vector<std::vector<int32_t>> buffers;
    for (const RankSchedule& rank : schedule.ranks) {
      std::vector<int32_t> buffer(rank.buffer_bytes / kElement, -1);
      for (uint64_t i = 0; i < spec.bytes / kElement; ++i) {
        buffer[i] = static_cast<int32_t>(rank.rank * 100000 + i);
      }
      buffers.push_back(std::move(buffer));
    }
    ExecuteSchedule<int32_t>(schedule, buffers, 7);
    int checked = 0;
    for (const RankSchedule& rank : schedule.ranks) {
      for (const Step& step : rank.steps) {
        if (step.kind != StepKind::kRecv) continue;
        for (uint64_t byte = step.offset; byte < step.offset + step.bytes; byte += kElement) {
          const int32_t value = buffers[rank.rank][byte / kElement];
          const uint64_t sent_at = AllToAllSenderOffset(spec, rank.rank, byte);
          ASSERT_EQ(value % 100000, static_cast<int32_t>(sent_at / kElement))
              << ToString(algorithm) << " rank " << rank.rank << " byte " << byte;
          ++checked;
        }
      }
    }
    EXPECT_GT(checked, 0);
    EXPECT_THROW(AllToAllSenderOffset(spec, 1, 0), std::invalid_argument);
  }
}

TEST(Transfers, PipelinePairExchangesBothWays) {
  // Stage 0 sends 40 bytes of activations to stage 1 and receives 24 bytes of gradients from
  // it in one group; stage 1 the converse. Two messages, matched across the two schedules.
  Schedule schedule;
  schedule.spec.world_size = 2;
  schedule.spec.element_bytes = kElement;
  schedule.ranks.push_back(
      BuildTransfersRankSchedule(0, 2, {{StepKind::kSend, 1, 40}, {StepKind::kRecv, 1, 24}}, 3));
  schedule.ranks.push_back(
      BuildTransfersRankSchedule(1, 2, {{StepKind::kRecv, 0, 40}, {StepKind::kSend, 0, 24}}, 3));
  std::vector<std::vector<int32_t>> buffers(2, std::vector<int32_t>(16, 0));
  for (int i = 0; i < 10; ++i) buffers[0][i] = 100 + i;      // activations
  for (int i = 0; i < 6; ++i) buffers[1][10 + i] = 200 + i;  // gradients
  const ExecutionReport report = ExecuteSchedule<int32_t>(schedule, buffers, 7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(buffers[1][i], 100 + i);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(buffers[0][10 + i], 200 + i);
  EXPECT_EQ(report.ranks[0].bytes_sent, 40u);
  EXPECT_EQ(report.ranks[1].bytes_sent, 24u);
  for (const RankSchedule& rank : schedule.ranks) {
    for (const Step& step : rank.steps) EXPECT_EQ(step.channel, 3);
  }
}

TEST(Transfers, BadTransfersAreRefused) {
  EXPECT_THROW(BuildTransfersRankSchedule(0, 2, {{StepKind::kSend, 0, 8}}, 0),
               std::invalid_argument);
  EXPECT_THROW(BuildTransfersRankSchedule(0, 2, {{StepKind::kSend, 2, 8}}, 0),
               std::invalid_argument);
  EXPECT_THROW(BuildTransfersRankSchedule(0, 2, {{StepKind::kRecv, 1, 0}}, 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace nbox::coll
