// The reference executor itself: it must catch what it is there to catch (missing
// dependencies, broken matching, deadlock), so that the numeric tests can fail.
#include "collectives/reference_executor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "collectives_test_util.h"
#include "numeric_check.h"

namespace nbox::coll {
namespace {

using testing::AllOps;
using testing::CheckRun;
using testing::PartSize;
using testing::Spec;

constexpr uint64_t kSeeds = 200;

// True if some seed in [0, kSeeds) gives a wrong result or a broken-protocol error.
bool SomeSeedFails(const Schedule& schedule) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    try {
      if (!CheckRun<double>(schedule, seed).empty()) return true;
    } catch (const ExecutionError&) {
      return true;
    }
  }
  return false;
}

// Every dependency of a Send on the Recv that filled its region is needed: dropping any one
// of them lets the Send snapshot stale data in some interleaving, and the result goes wrong.
TEST(CollectivesReferenceExecutor, CatchesEachMissingSendDependency) {
  for (CollectiveOp op : AllOps()) {
    // W = 3, two channels, 4-element blocks cut into 2-element chunks.
    const Schedule schedule = BuildSchedule(Spec(op, 3, 3 * 2 * 4 * 8, 2, 16, 8));
    ASSERT_FALSE(SomeSeedFails(schedule)) << ToString(op);
    int dropped = 0;
    for (const RankSchedule& rank : schedule.ranks) {
      for (const Step& step : rank.steps) {
        if (step.kind != StepKind::kSend || step.deps.empty()) continue;
        Schedule broken = schedule;
        broken.ranks[rank.rank].steps[step.id].deps.clear();
        EXPECT_TRUE(SomeSeedFails(broken)) << ToString(op) << ": dropping the dependency of rank "
                                           << rank.rank << " step " << step.id << " went unnoticed";
        ++dropped;
      }
    }
    // Sends of ring steps 1.. wait for data: per rank and channel, 2 chunks of each.
    const int waiting_steps = op == CollectiveOp::kAllReduce ? 3 : 1;
    EXPECT_EQ(dropped, 3 * 2 * 2 * waiting_steps) << ToString(op);
  }
}

// Two ranks swap one value in place: each sends its value, then receives the other's into the
// same place. Without the write-after-read dependency a Recv may overwrite the value before
// the Send has read it.
Schedule Swap(bool with_dependency) {
  Schedule schedule;
  schedule.spec = Spec(CollectiveOp::kAllReduce, 2, 8, 1, 0, 8);
  for (int r = 0; r < 2; ++r) {
    RankSchedule rank;
    rank.rank = r;
    rank.buffer_bytes = 8;
    Step send;
    send.id = 0;
    send.kind = StepKind::kSend;
    send.peer = 1 - r;
    send.bytes = 8;
    Step recv = send;
    recv.id = 1;
    recv.kind = StepKind::kRecv;
    if (with_dependency) recv.deps = {0};
    rank.steps = {send, recv};
    schedule.ranks.push_back(rank);
  }
  return schedule;
}

bool SwapIsRightForAllSeeds(const Schedule& schedule) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::vector<std::vector<double>> buffers = {{1.5}, {-2.25}};
    ExecuteSchedule<double>(schedule, buffers, seed);
    if (buffers[0][0] != -2.25 || buffers[1][0] != 1.5) return false;
  }
  return true;
}

TEST(CollectivesReferenceExecutor, CatchesAWriteAfterReadHazard) {
  EXPECT_TRUE(SwapIsRightForAllSeeds(Swap(true)));
  EXPECT_FALSE(SwapIsRightForAllSeeds(Swap(false)));
}

TEST(CollectivesReferenceExecutor, ReportsDeadlock) {
  // Each rank first waits for the other's message.
  Schedule schedule = Swap(true);
  for (RankSchedule& rank : schedule.ranks) {
    std::swap(rank.steps[0].kind, rank.steps[1].kind);  // 0 = Recv, 1 = Send after it
  }
  std::vector<std::vector<double>> buffers = {{1}, {2}};
  try {
    ExecuteSchedule<double>(schedule, buffers, 7);
    ADD_FAILURE() << "no deadlock reported";
  } catch (const DeadlockError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("deadlock"), std::string::npos) << text;
    EXPECT_NE(text.find("rank 1: 0 of 2 steps done"), std::string::npos) << text;
    EXPECT_NE(text.find("step 0 (Recv from rank 0 on channel 0, 8 bytes) waits for its message"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("step 1 (Send to rank 0 on channel 0, 8 bytes) waits for steps 0"),
              std::string::npos)
        << text;
  }
}

TEST(CollectivesReferenceExecutor, ReportsBrokenMatching) {
  // Sizes differ: rank 0 sends 8 bytes, rank 1 expects 4.
  Schedule schedule;
  schedule.spec = Spec(CollectiveOp::kAllGather, 2, 8, 1, 0, 4);
  schedule.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    schedule.ranks[r].rank = r;
    schedule.ranks[r].buffer_bytes = 8;
  }
  Step send;
  send.kind = StepKind::kSend;
  send.peer = 1;
  send.bytes = 8;
  Step recv;
  recv.kind = StepKind::kRecv;
  recv.peer = 0;
  recv.bytes = 4;
  schedule.ranks[0].steps = {send};
  schedule.ranks[1].steps = {recv};
  std::vector<std::vector<float>> buffers = {{1, 2}, {3, 4}};
  try {
    ExecuteSchedule<float>(schedule, buffers, 1);
    ADD_FAILURE() << "size mismatch not reported";
  } catch (const ExecutionError& error) {
    EXPECT_NE(std::string(error.what()).find("carries 8 bytes"), std::string::npos) << error.what();
  }

  // A message nobody receives.
  schedule.ranks[1].steps.clear();
  try {
    ExecuteSchedule<float>(schedule, buffers, 1);
    ADD_FAILURE() << "unmatched message not reported";
  } catch (const DeadlockError& error) {
    ADD_FAILURE() << "reported as deadlock: " << error.what();
  } catch (const ExecutionError& error) {
    EXPECT_NE(std::string(error.what()).find("no matching Recv"), std::string::npos)
        << error.what();
  }

  // A Recv nobody sends to: nothing can progress.
  schedule.ranks[0].steps.clear();
  schedule.ranks[1].steps = {recv};
  EXPECT_THROW(ExecuteSchedule<float>(schedule, buffers, 1), DeadlockError);
}

TEST(CollectivesReferenceExecutor, RejectsBuffersThatDoNotFit) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 2, 16, 1, 0, 4));
  std::vector<std::vector<double>> doubles = {{0, 0}, {0, 0}};
  EXPECT_THROW(ExecuteSchedule<double>(schedule, doubles, 0), std::invalid_argument);
  std::vector<std::vector<float>> one_rank = {{0, 0, 0, 0}};
  EXPECT_THROW(ExecuteSchedule<float>(schedule, one_rank, 0), std::invalid_argument);
  std::vector<std::vector<float>> short_buffer = {{0, 0, 0, 0}, {0, 0, 0}};
  EXPECT_THROW(ExecuteSchedule<float>(schedule, short_buffer, 0), std::invalid_argument);
  Schedule outside = schedule;
  outside.ranks[0].steps[0].offset = 12;  // 8 bytes from 12 overrun the 16-byte buffer
  std::vector<std::vector<float>> buffers = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  EXPECT_THROW(ExecuteSchedule<float>(outside, buffers, 0), std::invalid_argument);
}

// Traffic counters against the closed forms: all-reduce of S = 192 bytes on 4 ranks with two
// channels sends 2 * 3/4 * S = 288 bytes per rank in 2 * 3 * 2 * ceil(24 / 8) = 36 messages;
// all-gather of 13 elements on 3 ranks (segments 5, 4, 4) sends S - |segment r+1|.
TEST(CollectivesReferenceExecutor, CountsTraffic) {
  {
    const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 4, 192, 2, 8));
    std::vector<std::vector<float>> buffers(4, std::vector<float>(48, 1.0f));
    const ExecutionReport report = ExecuteSchedule<float>(schedule, buffers, 3);
    ASSERT_EQ(report.ranks.size(), 4u);
    for (const RankTraffic& traffic : report.ranks) {
      EXPECT_EQ(traffic.bytes_sent, 288u);
      EXPECT_EQ(traffic.bytes_received, 288u);
      EXPECT_EQ(traffic.messages_sent, 36u);
      EXPECT_EQ(traffic.messages_received, 36u);
    }
    for (float value : buffers[2]) EXPECT_EQ(value, 4.0f);
    // Four actions per message: Send start, delivery, Recv start, Recv completion.
    EXPECT_EQ(report.actions, 4u * 36 * 4);
  }
  {
    const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllGather, 3, 52, 1, 0));
    std::vector<std::vector<int32_t>> buffers(3, std::vector<int32_t>(13, 0));
    const ExecutionReport report = ExecuteSchedule<int32_t>(schedule, buffers, 3);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(report.ranks[r].bytes_sent, 52 - 4 * PartSize(13, 3, (r + 1) % 3)) << r;
      EXPECT_EQ(report.ranks[r].bytes_received, 52 - 4 * PartSize(13, 3, r)) << r;
      EXPECT_EQ(report.ranks[r].messages_sent, 2u) << r;
    }
  }
}

TEST(CollectivesReferenceExecutor, SameSeedSameRun) {
  const Schedule schedule = BuildSchedule(Spec(CollectiveOp::kAllReduce, 5, 4 * 97, 3, 12));
  auto run = [&](uint64_t seed) {
    std::vector<std::vector<float>> buffers(5, std::vector<float>(97));
    for (int r = 0; r < 5; ++r) {
      for (int i = 0; i < 97; ++i) buffers[r][i] = 0.1f * static_cast<float>(r * 97 + i);
    }
    ExecuteSchedule<float>(schedule, buffers, seed);
    return buffers;
  };
  EXPECT_EQ(run(11), run(11));
}

}  // namespace
}  // namespace nbox::coll
