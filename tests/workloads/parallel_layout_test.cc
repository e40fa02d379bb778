// ParallelLayout: ranks to (tensor, context, pipeline, data) coordinates and groups, worked out by
// hand for Megatron's default order and another one.
#include "workloads/parallel_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace nbox::work {
namespace {

using Group = std::vector<int>;

TEST(ParallelLayout, MegatronOrderPutsTensorGroupsOnConsecutiveRanks) {
  // t = 2, p = 2, d = 3, tp-dp-pp: rank = tp + 2 dp + 6 pp.
  const ParallelLayout layout({2, 2, 3, 1, "tp-dp-pp"});
  ASSERT_EQ(layout.world(), 12);
  const RankCoords c = layout.Coords(9);  // 9 = 1 + 2*1 + 6*1
  EXPECT_EQ(c.tensor, 1);
  EXPECT_EQ(c.data, 1);
  EXPECT_EQ(c.pipeline, 1);
  EXPECT_EQ(layout.Rank(c), 9);
  EXPECT_EQ(layout.TensorGroup(9), (Group{8, 9}));
  EXPECT_EQ(layout.DataGroup(9), (Group{7, 9, 11}));
  EXPECT_EQ(layout.PipelineGroup(9), (Group{3, 9}));
  EXPECT_EQ(layout.ModelParallelGroup(9), (Group{2, 3, 8, 9}));
  EXPECT_EQ(layout.EmbeddingGroup(9), (Group{3, 9}));
  for (int rank = 0; rank < layout.world(); ++rank)
    EXPECT_EQ(layout.Rank(layout.Coords(rank)), rank);
}

TEST(ParallelLayout, AnotherOrderMovesTheGroups) {
  // dp-tp-pp with t = 2, p = 2, d = 2: rank = dp + 2 tp + 4 pp.
  const ParallelLayout layout({2, 2, 2, 1, "dp-tp-pp"});
  EXPECT_EQ(layout.TensorGroup(0), (Group{0, 2}));
  EXPECT_EQ(layout.DataGroup(0), (Group{0, 1}));
  EXPECT_EQ(layout.PipelineGroup(0), (Group{0, 4}));
}

TEST(ParallelLayout, ExpertGroupsSplitTheDataDimension) {
  // t = 1, p = 1, d = 8, e = 4: expert groups {0..3}, {4..7}; expert-data groups join the
  // ranks at the same offset in them.
  const ParallelLayout layout({1, 1, 8, 4, "tp-dp-pp"});
  EXPECT_EQ(layout.ExpertGroup(5), (Group{4, 5, 6, 7}));
  EXPECT_EQ(layout.ExpertDataGroup(5), (Group{1, 5}));
  EXPECT_EQ(layout.EmbeddingGroup(5), (Group{5})) << "one stage: no embedding group";
}

TEST(ParallelLayout, ExpertDataGroupsSpanTheContextRanks) {
  // t = p = 1, d = 4, e = 2, c = 2: rank = cp + 2 dp, so rank 5 is (cp 1, dp 2). Its expert
  // group is the data block {2, 3} at its context index: ranks 5 and 7. The ranks holding its
  // experts (offset 0: dp 0 and 2) at either context index reduce their gradients: 0, 1, 4, 5.
  const ParallelLayout layout({1, 1, 4, 2, "tp-dp-pp", 2});
  EXPECT_EQ(layout.ExpertGroup(5), (Group{5, 7}));
  EXPECT_EQ(layout.ExpertDataGroup(5), (Group{0, 1, 4, 5}));
  EXPECT_EQ(layout.ExpertDataGroup(3), (Group{2, 3, 6, 7}));
}

TEST(ParallelLayout, ContextRanksSitRightAfterTensorRanksUnlessTheOrderSaysOtherwise) {
  // t = c = p = d = 2; "tp-dp-pp" leaves cp out, so it is Megatron's tp-cp-dp-pp:
  // rank = tp + 2 cp + 4 dp + 8 pp, and rank 15 is (1, 1, 1, 1).
  const ParallelLayout layout({2, 2, 2, 1, "tp-dp-pp", 2});
  ASSERT_EQ(layout.world(), 16);
  const RankCoords c = layout.Coords(15);
  EXPECT_EQ(c.tensor, 1);
  EXPECT_EQ(c.context, 1);
  EXPECT_EQ(c.data, 1);
  EXPECT_EQ(c.pipeline, 1);
  EXPECT_EQ(layout.TensorGroup(15), (Group{14, 15}));
  EXPECT_EQ(layout.ContextGroup(15), (Group{13, 15}));
  EXPECT_EQ(layout.DataGroup(15), (Group{11, 15}));
  EXPECT_EQ(layout.DataContextGroup(15), (Group{9, 11, 13, 15}));
  EXPECT_EQ(layout.PipelineGroup(15), (Group{7, 15}));
  EXPECT_EQ(layout.ModelParallelGroup(15), (Group{6, 7, 14, 15}));
  EXPECT_EQ(layout.EmbeddingGroup(15), (Group{7, 15}));
  for (int rank = 0; rank < layout.world(); ++rank)
    EXPECT_EQ(layout.Rank(layout.Coords(rank)), rank);

  // cp-tp-dp-pp: rank = cp + 2 tp + 4 dp + 8 pp.
  const ParallelLayout inner({2, 2, 2, 1, "cp-tp-dp-pp", 2});
  EXPECT_EQ(inner.ContextGroup(0), (Group{0, 1}));
  EXPECT_EQ(inner.TensorGroup(0), (Group{0, 2}));
  EXPECT_EQ(inner.DataContextGroup(0), (Group{0, 1, 4, 5}));
  // Without context parallelism the gradient group is the data-parallel one.
  const ParallelLayout plain({2, 2, 3, 1, "tp-dp-pp"});
  EXPECT_EQ(plain.DataContextGroup(9), plain.DataGroup(9));
}

TEST(ParallelLayout, BadDimensionsAreNamed) {
  auto message = [](ParallelDims dims) -> std::string {
    try {
      ParallelLayout layout(dims);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({1, 1, 6, 4, "tp-dp-pp"}).find("ParallelDims.expert"), std::string::npos);
  EXPECT_NE(message({0, 1, 1, 1, "tp-dp-pp"}).find("ParallelDims.tensor"), std::string::npos);
  EXPECT_NE(message({1, 1, 1, 1, "tp-dp"}).find("ParallelDims.order"), std::string::npos);
  EXPECT_NE(message({1, 1, 1, 1, "tp-dp-dp"}).find("ParallelDims.order"), std::string::npos);
  EXPECT_NE(message({1, 1, 1, 1, "tp-cp-dp-cp"}).find("ParallelDims.order"), std::string::npos);
  EXPECT_NE(message({1, 1, 1, 1, "tp-dp-pp", 0}).find("ParallelDims.context"), std::string::npos);
}

}  // namespace
}  // namespace nbox::work
