// [workload] keys of the dlrm kind and collectives.alltoall: a job loads into the generator's
// configuration, and every way of getting it wrong names the keys, their values and where
// they came from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario_test_support.h"
#include "tools/cosim/scenario/workload_config.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using ::testing::HasSubstr;
using testing::LoadError;

const std::string kJob = Fixture("dlrm.ini");

TEST(DlrmKeys, AJobLoadsThePresetAndItsBandwidth) {
  const work::DlrmConfig c = DlrmConfigOf(LoadScenario(kJob));
  EXPECT_EQ(c.shape.name, "dlrm-rashidi");
  EXPECT_EQ(c.shape.tables, 64);
  EXPECT_EQ(c.world_size, 16);
  EXPECT_EQ(c.batch_per_rank, 512);
  EXPECT_EQ(c.compute.memory_bytes_per_s, 900e9);  // GB = 10^9 bytes
}

TEST(DlrmKeys, ShapeKeysOverrideThePreset) {
  const work::DlrmConfig c =
      DlrmConfigOf(LoadScenario(kJob, {"workload.tables=8", "workload.embedding_dim=32",
                                       "workload.bottom_mlp=256,32", "workload.top_mlp=64,1"}));
  EXPECT_EQ(c.shape.tables, 8);
  EXPECT_EQ(c.shape.bottom_mlp, (std::vector<int>{256, 32}));
  EXPECT_EQ(c.shape.top_mlp, (std::vector<int>{64, 1}));
  EXPECT_EQ(c.shape.pooling, 60);  // still the preset's
}

TEST(DlrmKeys, BadValuesSayWhatIsExpected) {
  EXPECT_THAT(LoadError(kJob, {"workload.bottom_mlp=512,0,64"}),
              HasSubstr("bottom_mlp = '512,0,64': expected a comma-separated list of layer "
                        "widths from 1 to 1048576"));
  EXPECT_THAT(LoadError(kJob, {"workload.gpu_memory_bw=900GB"}),
              HasSubstr("gpu_memory_bw = '900GB': expected a byte rate"));
  EXPECT_THAT(LoadError(kJob, {"workload.gpu_memory_bw=0/s"}),
              HasSubstr("workload.gpu_memory_bw = 0/s (--set): a memory bandwidth is needed"));
}

TEST(DlrmKeys, TheBottomMlpMustEndAtTheEmbeddingDimension) {
  EXPECT_THAT(LoadError(kJob, {"workload.embedding_dim=32"}),
              HasSubstr("the bottom MLP's last width (64, workload.bottom_mlp of workload.model "
                        "= dlrm-rashidi (line 6)) must equal the embedding dimension (32, "
                        "workload.embedding_dim = 32 (--set))"));
}

TEST(DlrmKeys, ACustomModelNeedsItsShape) {
  EXPECT_THAT(LoadError(kJob, {"workload.model=custom", "workload.tables=8"}),
              HasSubstr("requires the shape keys; missing: workload.embedding_dim, "
                        "workload.pooling, workload.dense_features, workload.bottom_mlp, "
                        "workload.top_mlp"));
}

TEST(DlrmKeys, OtherKindsKeysAndModelsAreRefused) {
  EXPECT_THAT(LoadError(kJob, {"workload.model=gpt3-13b"}),
              HasSubstr("is not a model of workload.kind = dlrm (line 5): choose one of "
                        "dlrm-rashidi or custom"));
  EXPECT_THAT(LoadError(kJob, {"workload.tensor_parallel=2"}),
              HasSubstr("workload.tensor_parallel = 2 (--set) is not used by workload.kind = "
                        "dlrm"));
}

TEST(DlrmKeys, HierarchicalAllToAllNeedsServers) {
  EXPECT_THAT(LoadError(kJob, {"collectives.alltoall=hierarchical"}),
              HasSubstr("collectives.alltoall = hierarchical (--set) needs servers: "
                        "topology.kind = rail"));
}

}  // namespace
}  // namespace nbox::scenario
