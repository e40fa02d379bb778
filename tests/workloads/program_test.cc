// ValidateJobPrograms: programs that do not fit together are refused with the rank, the op
// and the problem named.
#include "workloads/program.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "workloads/ops.h"

namespace nbox::work {
namespace {

// Two ranks; slot 0 the world, slot 1 a group {0, 1} named "pair".
JobPrograms TwoRanks(std::vector<Op> ops) {
  auto program = std::make_shared<RankProgram>();
  program->iterations = 1;
  program->ops = std::move(ops);
  JobPrograms job = SameProgramEverywhere(2, program, Parallelism::kData, "dp");
  job.communicators.push_back(Communicator{"pair", Parallelism::kTensor, {0, 1}});
  for (auto& slots : job.rank_comms) slots.push_back(1);
  job.stream_names.push_back("tp");
  return job;
}

std::string Problem(const JobPrograms& job) {
  try {
    ValidateJobPrograms(job);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(JobPrograms, AWellFormedJobPasses) {
  EXPECT_EQ(Problem(TwoRanks({CollectiveOp(0, "a", coll::CollectiveOp::kAllReduce, 8, 0, 0),
                              CollectiveOp(0, "b", coll::CollectiveOp::kAllReduce, 8, 1, 1),
                              WaitOp(0, 1), WaitStreamOp(0, 1), WaitAllOp(0)})),
            "");
}

TEST(JobPrograms, ProblemsNameTheRankTheOpAndWhat) {
  EXPECT_NE(Problem(TwoRanks({CollectiveOp(0, "x", coll::CollectiveOp::kAllReduce, 8, 2, 0)}))
                .find("program of rank 0, op 0 'x': names communicator slot 2"),
            std::string::npos);
  EXPECT_NE(Problem(TwoRanks({WaitOp(0, 0)})).find("not an earlier communication op"),
            std::string::npos);
  EXPECT_NE(Problem(TwoRanks({CollectiveOp(0, "x", coll::CollectiveOp::kAllReduce, 8, 0, 0),
                              CollectiveOp(0, "y", coll::CollectiveOp::kAllReduce, 8, 0, 1)}))
                .find("uses communicator 'world' on stream 1 after stream 0"),
            std::string::npos);
  EXPECT_NE(Problem(TwoRanks({CollectiveOp(0, "x", coll::CollectiveOp::kAllReduce, 8, 0, 5)}))
                .find("issues on stream 5 of 2"),
            std::string::npos);
  EXPECT_NE(Problem(TwoRanks({TransfersOp(0, "p", {{coll::StepKind::kSend, 0, 8}}, 1, 1)}))
                .find("rank 0 of 'pair'"),
            std::string::npos)
      << "rank 0 sends to itself";
  EXPECT_NE(Problem(TwoRanks({CollectiveOp(0, "x", coll::CollectiveOp::kAllReduce, 0, 0, 0)}))
                .find("a collective of 0 bytes"),
            std::string::npos);
  JobPrograms outsider = TwoRanks({CollectiveOp(0, "x", coll::CollectiveOp::kAllReduce, 8, 1, 1)});
  outsider.communicators[1].ranks = {0};
  EXPECT_NE(Problem(outsider).find("rank 1, op 0 'x': the rank is not a member of communicator "
                                   "'pair'"),
            std::string::npos)
      << Problem(outsider);
  JobPrograms bad_counts =
      TwoRanks({AllToAllVOp(0, "a2a", std::make_shared<const std::vector<uint64_t>>(3, 8), 1, 1)});
  EXPECT_NE(Problem(bad_counts).find("all-to-all-v sizes must be 2 x 2"), std::string::npos);
}

}  // namespace
}  // namespace nbox::work
