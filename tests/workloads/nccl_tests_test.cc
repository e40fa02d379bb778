// nccl-tests' sweep (workloads/nccl_tests.h): its sizes, rounded as nccl-tests rounds them, and
// the program every rank runs.
#include "workloads/nccl_tests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace nbox::work {
namespace {

using coll::CollectiveOp;
using ::testing::HasSubstr;

NcclTestsConfig Sweep(CollectiveOp op, uint64_t min_bytes, uint64_t max_bytes, uint64_t factor) {
  NcclTestsConfig c;
  c.collective = op;
  c.min_bytes = min_bytes;
  c.max_bytes = max_bytes;
  c.step_factor = factor;
  return c;
}

// -b 8 -e 100 -f 4: 8, 32 (128 is past the end); a size is whole floats: 10 is 8, 40 stays.
TEST(NcclTestsSizes, StepByTheFactorToTheLargestAndRoundToWholeElements) {
  EXPECT_EQ(NcclTestsSizes(Sweep(CollectiveOp::kAllReduce, 8, 100, 4), 8),
            (std::vector<uint64_t>{8, 32}));
  EXPECT_EQ(NcclTestsSizes(Sweep(CollectiveOp::kAllReduce, 10, 100, 4), 8),
            (std::vector<uint64_t>{8, 40}));
  EXPECT_EQ(NcclTestsSizes(Sweep(CollectiveOp::kBroadcast, 4, 4, 2), 8),
            (std::vector<uint64_t>{4}));
}

// All-gather, reduce-scatter and all-to-all cut the buffer among the ranks: on 8 ranks a size
// is a whole number of 8 floats (32 B); 8 and 16 B hold none and are left out; 48 is 32.
TEST(NcclTestsSizes, CutBuffersAreWholeElementsPerRank) {
  for (CollectiveOp op :
       {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll}) {
    EXPECT_EQ(NcclTestsSizes(Sweep(op, 8, 1024, 2), 8),
              (std::vector<uint64_t>{32, 64, 128, 256, 512, 1024}));
    EXPECT_EQ(NcclTestsSizes(Sweep(op, 48, 100, 2), 8), (std::vector<uint64_t>{32, 96}));
  }
}

TEST(NcclTestsSizes, RefusesWhatNcclTestsCannotRun) {
  auto error = [](NcclTestsConfig c) {
    try {
      NcclTestsSizes(c, 8);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error(Sweep(CollectiveOp::kAllReduce, 64, 32, 2)),
              HasSubstr("NcclTestsConfig.max_bytes: must be >= min_bytes = 64 (got 32)"));
  EXPECT_THAT(error(Sweep(CollectiveOp::kAllReduce, 8, 32, 1)),
              HasSubstr("NcclTestsConfig.step_factor: must be >= 2 (got 1)"));
  EXPECT_THAT(error(Sweep(CollectiveOp::kAllToAllV, 8, 32, 2)), HasSubstr("AllToAllV"));
  // An all-gather on 8 ranks needs 32 bytes for a float each: 8 to 16 has no size left.
  EXPECT_THAT(error(Sweep(CollectiveOp::kAllGather, 8, 16, 2)),
              HasSubstr("NcclTestsConfig.max_bytes: must be at least 32 bytes, so that some size "
                        "holds a whole 4-byte element per rank (got 16)"));
  NcclTestsConfig no_runs = Sweep(CollectiveOp::kAllReduce, 8, 32, 2);
  no_runs.iterations = 0;
  EXPECT_THAT(error(no_runs), HasSubstr("NcclTestsConfig.iterations: must be >= 1"));
}

// Iteration i is size i: its warm-up runs, then its timed ones, each waited for.
TEST(NcclTestsProgram, EachSizeIsAnIterationOfWarmupThenTimedRuns) {
  NcclTestsConfig c = Sweep(CollectiveOp::kReduceScatter, 32, 64, 2);
  c.warmup = 1;
  c.iterations = 2;
  const RankProgram program = MakeNcclTestsProgram(c, 8);
  EXPECT_EQ(program.iterations, 2);
  const std::vector<OpKind> one_size = {
      OpKind::kIterationBegin, OpKind::kCollective, OpKind::kWaitAll, OpKind::kCollective,
      OpKind::kWaitAll,        OpKind::kCollective, OpKind::kWaitAll, OpKind::kIterationEnd};
  ASSERT_EQ(program.ops.size(), 2 * one_size.size());
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    EXPECT_EQ(op.kind, one_size[i % one_size.size()]) << i;
    EXPECT_EQ(op.iteration, static_cast<int>(i / one_size.size())) << i;
    if (op.kind != OpKind::kCollective) continue;
    EXPECT_EQ(op.collective, CollectiveOp::kReduceScatter);
    EXPECT_EQ(op.bytes, i < one_size.size() ? 32u : 64u);
    EXPECT_EQ(op.element_bytes, 4u);
    EXPECT_EQ(op.comm, 0);
    EXPECT_EQ(op.label, i % one_size.size() == 1 ? kNcclTestsWarmupLabel : kNcclTestsTimedLabel);
  }
}

}  // namespace
}  // namespace nbox::work
