// DLRM jobs as programs: the preset's MLP size by hand, the embedding exchange's sizes from the
// sharding, and the configuration's errors.
#include "workloads/dlrm.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace nbox::work {
namespace {

DlrmConfig Small(int world) {
  DlrmConfig c;
  c.shape.name = "small";
  c.shape.dense_features = 13;
  c.shape.bottom_mlp = {32, 16};
  c.shape.top_mlp = {64, 1};
  c.shape.tables = 5;
  c.shape.embedding_dim = 16;
  c.shape.pooling = 3;
  c.world_size = world;
  c.batch_per_rank = 8;
  c.compute.memory_bytes_per_s = 900e9;
  c.iterations = 1;
  return c;
}

TEST(DlrmShape, ThePresetsMlpsByHand) {
  // Bottom: 1600 -> 1024, five 1024 -> 1024, 1024 -> 64; top: (65 * 64 / 2 + 64 = 2144) ->
  // 2048, ten 2048 -> 2048, 2048 -> 1; weights and biases.
  const DlrmShape* s = FindDlrmPreset("dlrm-rashidi");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->InteractionWidth(), 2144);
  const uint64_t bottom = (1600 * 1024 + 1024) + 5 * (1024 * 1024 + 1024) + (1024 * 64 + 64);
  const uint64_t top = (2144 * 2048 + 2048) + 10 * (2048 * 2048 + 2048) + (2048 + 1);
  EXPECT_EQ(s->MlpParameters(), bottom + top);
}

TEST(DlrmJob, TheEmbeddingExchangeCarriesEachRanksTablesForEveryRanksSamples) {
  // 5 tables round robin over 3 ranks: ranks 0 and 1 hold two, rank 2 one. Rank i sends rank j
  // its tables' pooled vectors for j's 8 samples: tables_i x 8 x 16 x 2 bytes; backward the
  // transpose.
  const JobPrograms job = MakeDlrmJob(Small(3));
  ValidateJobPrograms(job);
  AllToAllCounts forward;
  AllToAllCounts backward;
  for (const Op& op : job.programs[0]->ops) {
    if (op.label == "emb fwd") forward = op.counts;
    if (op.label == "emb bwd") backward = op.counts;
  }
  ASSERT_TRUE(forward && backward);
  const uint64_t per_table = 8 * 16 * 2;
  const uint64_t tables[] = {2, 2, 1};
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      EXPECT_EQ((*forward)[i * 3 + j], tables[i] * per_table);
      EXPECT_EQ((*backward)[j * 3 + i], tables[i] * per_table);
    }
  }
  EXPECT_EQ(job.programs[0], job.programs[1]) << "same tables, same program";
  EXPECT_NE(job.programs[0], job.programs[2]);
}

TEST(DlrmJob, ConfigurationErrorsNameTheField) {
  auto message = [](DlrmConfig c) -> std::string {
    try {
      ValidateDlrmConfig(c);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  DlrmConfig c = Small(2);
  c.compute.memory_bytes_per_s = 0;
  EXPECT_NE(message(c).find("DlrmConfig.compute.memory_bytes_per_s"), std::string::npos);
  c = Small(2);
  c.shape.bottom_mlp = {32, 8};
  EXPECT_NE(message(c).find("DlrmShape.bottom_mlp"), std::string::npos);
}

}  // namespace
}  // namespace nbox::work
