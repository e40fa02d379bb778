// MergeClusterPrograms: two jobs' programs as one job's, each job's ranks and communicators
// after the earlier ones', streams of one name one stream.
#include "workloads/cluster_programs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "workloads/ops.h"

namespace nbox::work {
namespace {

using ::testing::ElementsAre;

// A job of `ranks` ranks whose every rank all-reduces on a world communicator and on stream
// `stream` of `streams`, then waits for that stream.
JobPrograms OneAllReduce(int ranks, std::vector<std::string> streams, int stream) {
  auto program = std::make_shared<RankProgram>();
  program->iterations = 1;
  program->ops.push_back(
      CollectiveOp(0, "ar", coll::CollectiveOp::kAllReduce, 1024, /*comm=*/0, stream));
  program->ops.push_back(WaitStreamOp(0, stream));
  JobPrograms job = SameProgramEverywhere(ranks, program, Parallelism::kData, streams.front());
  job.stream_names = std::move(streams);
  return job;
}

TEST(ClusterPrograms, EachJobsRanksAndCommunicatorsFollowTheEarlierOnes) {
  const JobPrograms a = OneAllReduce(2, {"dp"}, 0);
  const JobPrograms b = OneAllReduce(3, {"dp"}, 0);
  const ClusterPrograms cluster = MergeClusterPrograms({&a, &b});
  const JobPrograms& merged = cluster.programs;
  EXPECT_THAT(cluster.first_rank, ElementsAre(0, 2));
  ASSERT_EQ(merged.world_size(), 5);
  ASSERT_EQ(merged.communicators.size(), 3u);
  EXPECT_THAT(merged.communicators[0].ranks, ElementsAre(0, 1, 2, 3, 4));  // used by no op
  EXPECT_THAT(merged.communicators[1].ranks, ElementsAre(0, 1));
  EXPECT_THAT(merged.communicators[2].ranks, ElementsAre(2, 3, 4));
  EXPECT_THAT(merged.rank_comms[1], ElementsAre(1));
  EXPECT_THAT(merged.rank_comms[2], ElementsAre(2));
  EXPECT_THAT(merged.stream_names, ElementsAre("dp"));
  // Streams need no renumbering: the jobs' programs are shared, not copied.
  EXPECT_EQ(merged.programs[2].get(), b.programs[0].get());
  EXPECT_NO_THROW(ValidateJobPrograms(merged));
}

// b's streams are (tp, dp) where a's are (dp): b's "dp" is the cluster's stream 0, its "tp"
// a new stream 1, and its ranks share one renumbered copy of their program.
TEST(ClusterPrograms, StreamsOfOneNameAreOneStream) {
  const JobPrograms a = OneAllReduce(2, {"dp"}, 0);
  const JobPrograms b = OneAllReduce(2, {"tp", "dp"}, 1);
  const JobPrograms merged = MergeClusterPrograms({&a, &b}).programs;
  EXPECT_THAT(merged.stream_names, ElementsAre("dp", "tp"));
  EXPECT_EQ(merged.programs[2]->ops[0].stream, 0);  // b's dp
  EXPECT_EQ(merged.programs[2]->ops[1].stream, 0);  // its wait on it
  EXPECT_EQ(merged.programs[2].get(), merged.programs[3].get());
  EXPECT_NE(merged.programs[2].get(), b.programs[0].get());
  EXPECT_EQ(b.programs[0]->ops[0].stream, 1);  // b's own programs untouched
  EXPECT_NO_THROW(ValidateJobPrograms(merged));
  EXPECT_THROW(MergeClusterPrograms({}), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::work
