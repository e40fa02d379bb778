// Transformer jobs as programs (before any simulation): the shape's parameter counts against
// the published ones, the schedules' order of forwards and backwards worked out by hand,
// micro-batches, MoE routing, program sharing and the configuration's errors.
#include "workloads/transformer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tests/workloads/small_transformer.h"
#include "workloads/moe_routing.h"
#include "workloads/transformer_program.h"

namespace nbox::work {
namespace {

TransformerConfig Small(int t, int p, int d, int microbatches, PipelineSchedule schedule) {
  return testing::SmallTransformer(t, p, d, microbatches, schedule);
}

// The order in which a program runs forwards and backwards: "F0 F1 B0 ...", from the labels
// of its first layer's compute ops.
std::string PassOrder(const RankProgram& program, int layer) {
  std::string order;
  const std::string suffix = " L" + std::to_string(layer) + " attn";
  for (const Op& op : program.ops) {
    if (op.kind != OpKind::kCompute) continue;
    if (op.label.size() < suffix.size() ||
        op.label.compare(op.label.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    order += (order.empty() ? "" : " ") + op.label.substr(0, op.label.find(' '));
  }
  return order;
}

TEST(TransformerShape, PresetsHaveTheirPublishedParameterCounts) {
  // Parameters from the shape alone (GPT-3's linear biases counted, LayerNorms' biases not),
  // against the published totals.
  struct Expected {
    const char* name;
    double billions;
    double tolerance;
  };
  for (const Expected& e :
       {Expected{"gpt3-13b", 13.0, 0.03}, Expected{"gpt3-175b", 175.0, 0.01},
        Expected{"llama2-7b", 6.74, 0.01}, Expected{"llama2-70b", 68.98, 0.01},
        Expected{"llama3-8b", 8.03, 0.01}, Expected{"llama3-70b", 70.55, 0.01},
        Expected{"mixtral-8x7b", 46.7, 0.01}, Expected{"qwen1.5-moe-a2.7b", 14.3, 0.01},
        Expected{"llama4-scout", 109, 0.02}, Expected{"llama4-maverick", 400, 0.01},
        Expected{"deepseek-moe-16b", 16.4, 0.01}, Expected{"deepseek-v3", 671, 0.01}}) {
    const TransformerShape* shape = FindTransformerPreset(e.name);
    ASSERT_NE(shape, nullptr) << e.name;
    EXPECT_NEAR(static_cast<double>(shape->Parameters()) / 1e9 / e.billions, 1.0, e.tolerance)
        << e.name << ": " << shape->Parameters();
  }
}

// Linear biases as Megatron's add_bias_linear places them, on a layer of h = 64, 4 heads, an
// MLP of 256, counted by hand: QKV 3h and the output's h; GeLU's two matrices 256 and h,
// SwiGLU's three 2 x 256 and h. Of a tensor rank's share (t = 2) the row-parallel biases (the
// output's and the MLP's last, added after the reduction) are whole, with the two norms; the
// column-parallel ones split.
TEST(TransformerShape, LinearBiasesAreCountedWhereMegatronPutsThem) {
  TransformerConfig c = testing::SmallTransformer(2, 1, 1, 1, PipelineSchedule::kOneFOneB);
  c.shape.layers = 1;
  c.shape.gated_mlp = false;
  c.shape.linear_bias = false;
  const uint64_t attention = 4 * 64 * 64, gelu = 2 * 64 * 256, norms = 2 * 64;
  EXPECT_EQ(c.shape.LayerParameters(0), attention + gelu + norms);
  EXPECT_EQ(c.shape.ReplicatedLayerParameters(0), norms);
  const uint64_t unbiased = ParametersOf(c, StageOf(c, 0)).dense;

  c.shape.linear_bias = true;
  EXPECT_EQ(c.shape.AttentionParameters(), attention + 3 * 64 + 64);
  EXPECT_EQ(c.shape.MlpParameters(), gelu + 256 + 64);
  EXPECT_EQ(c.shape.ReplicatedLayerParameters(0), norms + 64 + 64);
  // The rank's share grows by half of the split biases (3h + 256) and all of the others (2h).
  EXPECT_EQ(ParametersOf(c, StageOf(c, 0)).dense, unbiased + (3 * 64 + 256) / 2 + 2 * 64);

  c.shape.gated_mlp = true;
  EXPECT_EQ(c.shape.MlpParameters(), 3 * 64 * 256 + 2 * 256 + 64);
  // GPT-3 has them, Llama does not.
  EXPECT_TRUE(FindTransformerPreset("gpt3-13b")->linear_bias);
  EXPECT_FALSE(FindTransformerPreset("llama3-8b")->linear_bias);
}

TEST(TransformerShape, ActiveParametersCountTheSharedExpert) {
  // Qwen1.5-MoE: 14.3B in all, 2.7B active per token: all but the 60 - 4 routed experts a token
  // skips in each of the 24 layers (3 x 2048 x 1408 each). Its shared expert (3 x 2048 x 5632
  // per layer, 0.83B in all) is active for every token.
  const TransformerShape* qwen = FindTransformerPreset("qwen1.5-moe-a2.7b");
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(qwen->SharedExpertParameters(), 3ull * 2048 * 5632);
  const double skipped = 24.0 * (60 - 4) * 3 * 2048 * 1408;
  EXPECT_NEAR((static_cast<double>(qwen->Parameters()) - skipped) / 2.7e9, 1.0, 0.01);
}

TEST(TransformerShape, Llama4HasSeventeenBillionActiveParameters) {
  // Both published as 17B active: top-1 routing skips E - 1 routed experts (3 x 5120 x 8192
  // each) in each MoE layer, 48 of Scout's (16 experts) and 24 of Maverick's (128), whose other
  // 24 layers are dense with an MLP of 16384.
  const double expert = 3.0 * 5120 * 8192;
  for (const auto& [name, moe_layers, experts] :
       {std::tuple{"llama4-scout", 48, 16}, std::tuple{"llama4-maverick", 24, 128}}) {
    const TransformerShape* shape = FindTransformerPreset(name);
    ASSERT_NE(shape, nullptr) << name;
    const double active =
        static_cast<double>(shape->Parameters()) - moe_layers * (experts - 1) * expert;
    EXPECT_NEAR(active / 17e9, 1.0, 0.02) << name;
  }
  const TransformerShape* maverick = FindTransformerPreset("llama4-maverick");
  EXPECT_TRUE(maverick->IsMoeLayer(0));
  EXPECT_FALSE(maverick->IsMoeLayer(1));
  EXPECT_EQ(maverick->LayerParameters(1) - maverick->AttentionParameters() - 2 * 5120,
            3ull * 5120 * 16384);
}

TEST(TransformerShape, DeepSeekMoeStartsWithADenseLayer) {
  // DeepSeekMoE 16B: 2.8B active of 16.4B: its 27 MoE layers skip 64 - 6 routed experts of
  // 3 x 2048 x 1408 each; layer 0 is dense, its MLP 3 x 2048 x 10944.
  const TransformerShape* shape = FindTransformerPreset("deepseek-moe-16b");
  ASSERT_NE(shape, nullptr);
  EXPECT_FALSE(shape->IsMoeLayer(0));
  EXPECT_TRUE(shape->IsMoeLayer(1));
  EXPECT_EQ(shape->LayerParameters(0) - shape->AttentionParameters() - 2 * 2048,
            3ull * 2048 * 10944);
  const double skipped = 27.0 * (64 - 6) * 3 * 2048 * 1408;
  EXPECT_NEAR((static_cast<double>(shape->Parameters()) - skipped) / 2.8e9, 1.0, 0.02);
}

TEST(TransformerShape, AnMoeModelKeepsAtLeastOneMoeLayer) {
  // 4 layers, every other one MoE from layer 0 (0 and 2), the first 3 dense: none is left.
  TransformerShape s = *FindTransformerPreset("mixtral-8x7b");
  s.layers = 4;
  s.moe_layer_freq = 2;
  s.first_dense_layers = 3;
  EXPECT_THROW(ValidateTransformerShape(s), std::invalid_argument);
  s.first_dense_layers = 2;  // layer 2 is one
  EXPECT_NO_THROW(ValidateTransformerShape(s));
}

TEST(TransformerShape, ModelFlopsPerTokenCountEveryLayerAndTheLogits) {
  // SmallTransformer's shape (4 layers, h = 64, 4 heads, f = 256 GeLU, s = 32, V = 100): per
  // layer QKV and output 2 x 4 h^2 = 32768, scores 4 s h = 8192, MLP 2 x 2 h f = 65536; logits
  // 2 h V = 12800.
  TransformerConfig c = testing::SmallTransformer(1, 1, 1, 2, PipelineSchedule::kOneFOneB);
  EXPECT_DOUBLE_EQ(c.shape.ModelFlopsPerToken(), 4 * (32768.0 + 8192 + 65536) + 12800);
  // Two micro-batches of one 32-token sequence, forward and a backward of twice its FLOPs.
  EXPECT_DOUBLE_EQ(c.ModelFlopsPerIteration(), 2 * 32 * 3 * c.shape.ModelFlopsPerToken());
  // Top-2 of 4 experts of the same width, a router of 2 h E, a shared expert of 128.
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.shape.shared_expert_ffn = 128;
  EXPECT_DOUBLE_EQ(c.shape.ModelFlopsPerToken(),
                   4 * (32768.0 + 8192 + 2 * 64 * 4 + 2 * 65536 + 2 * 2 * 64 * 128) + 12800);
}

TEST(TransformerShape, DeepSeekV3HasLatentAttention) {
  // DeepSeek-V2 Sec. 2.1 with V3's sizes (h = 7168, 128 heads): W_DQ 7168 x 1536 and its norm,
  // W_UQ 1536 x 128 x (128 + 64); W_DKV and W_KR 7168 x (512 + 64), its norm, W_UK and W_UV
  // 512 x 128 x (128 + 128); W_O 128 x 128 x 7168.
  const TransformerShape* v3 = FindTransformerPreset("deepseek-v3");
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->AttentionParameters(), 7168ull * 1536 + 1536 + 1536ull * 128 * 192 + 7168ull * 576 +
                                           512 + 512ull * 128 * 256 + 128ull * 128 * 7168);
  // Scores over 4096 keys: queries and keys of 192, values of 128, per head.
  EXPECT_DOUBLE_EQ(v3->AttentionScoreFlopsPerToken(), 2.0 * 4096 * 128 * (192 + 128));
  // 37B active of 671B: each of its 58 MoE layers skips 256 - 8 routed experts (3 x 7168 x
  // 2048 each).
  const double skipped = 58.0 * (256 - 8) * 3 * 7168 * 2048;
  EXPECT_NEAR((static_cast<double>(v3->Parameters()) - skipped) / 37e9, 1.0, 0.02);
  // Without MLA the score FLOPs are 4 s h.
  const TransformerShape* mixtral = FindTransformerPreset("mixtral-8x7b");
  EXPECT_DOUBLE_EQ(mixtral->AttentionScoreFlopsPerToken(), 4.0 * 32768 * 4096);
}

TEST(TransformerProgram, OneFOneBOrderOfAStage) {
  // p = 4, m = 6: stage 1 warms up with p - s - 1 = 2 forwards, then alternates, then cools
  // down with 2 backwards (Narayanan et al. 2021, Fig. 4, top).
  const JobPrograms job = MakeTransformerJob(Small(1, 4, 1, 6, PipelineSchedule::kOneFOneB));
  EXPECT_EQ(PassOrder(*job.programs[1], 1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5");
  EXPECT_EQ(PassOrder(*job.programs[3], 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  EXPECT_EQ(PassOrder(*job.programs[0], 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
}

TEST(TransformerProgram, GPipeRunsEveryForwardThenEveryBackward) {
  const JobPrograms job = MakeTransformerJob(Small(1, 2, 1, 3, PipelineSchedule::kGPipe));
  EXPECT_EQ(PassOrder(*job.programs[0], 0), "F0 F1 F2 B2 B1 B0");
}

// Every pass of a program in order ("F0c1 B0c0 ..."), from its attention compute ops; with one
// layer per chunk each pass has one.
std::string EveryPass(const RankProgram& program) {
  std::string order;
  for (const Op& op : program.ops) {
    if (op.kind != OpKind::kCompute || op.label.size() < 5 ||
        op.label.compare(op.label.size() - 5, 5, " attn") != 0) {
      continue;
    }
    order += (order.empty() ? "" : " ") + op.label.substr(0, op.label.find(' '));
  }
  return order;
}

TEST(TransformerProgram, InterleavedOneFOneBOrderOfBothStages) {
  // p = 2, v = 2, m = 4, one layer per chunk. Megatron's rules, worked by hand: forward step
  // k runs chunk (k mod p v) / p (backward: v - 1 minus that) on micro-batch (k / p v) p +
  // k mod p; stage s warms up with (p - s - 1) 2 + (v - 1) p forwards, alternates, cools down.
  TransformerConfig c = Small(1, 2, 1, 4, PipelineSchedule::kOneFOneB);
  c.virtual_stages = 2;
  const JobPrograms job = MakeTransformerJob(c);
  EXPECT_EQ(EveryPass(*job.programs[0]),
            "F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0");
  EXPECT_EQ(EveryPass(*job.programs[1]),
            "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0");
  // Chunk j of stage s holds virtual stage j p + s: stage 1's chunk 0 is layer 1, chunk 1 layer 3.
  const std::string ops = [&] {
    std::string all;
    for (const Op& op : job.programs[1]->ops) all += op.label + "\n";
    return all;
  }();
  EXPECT_NE(ops.find("F0c0 L1 attn"), std::string::npos);
  EXPECT_NE(ops.find("F0c1 L3 attn"), std::string::npos);
}

TEST(TransformerProgram, RecomputationRunsAgainWhatTheBackwardNeeds) {
  // Full: each layer's forward again right before its backward ("R"), in reverse layer order;
  // selective: only the core attention, inside the backward ("B0 L0 attn recompute").
  TransformerConfig full = Small(1, 1, 1, 2, PipelineSchedule::kGPipe);
  full.recompute = Recompute::kFull;
  EXPECT_EQ(PassOrder(*MakeTransformerJob(full).programs[0], 0), "F0 F1 R1 B1 R0 B0");
  TransformerConfig selective = full;
  selective.recompute = Recompute::kSelective;
  const JobPrograms job = MakeTransformerJob(selective);
  EXPECT_EQ(PassOrder(*job.programs[0], 0), "F0 F1 B1 B0");
  int recomputed = 0;
  for (const Op& op : job.programs[0]->ops) {
    if (op.label.find("attn recompute") != std::string::npos) ++recomputed;
  }
  EXPECT_EQ(recomputed, 4 * 2);  // every layer, every micro-batch
}

TEST(TransformerProgram, RanksOfOneStageShareAProgram) {
  // t = 2, p = 2, d = 2: ranks 0-3 are stage 0, 4-7 stage 1 (tp-dp-pp).
  const JobPrograms job = MakeTransformerJob(Small(2, 2, 2, 2, PipelineSchedule::kOneFOneB));
  ASSERT_EQ(job.world_size(), 8);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(job.programs[r], job.programs[0]);
  for (int r = 5; r < 8; ++r) EXPECT_EQ(job.programs[r], job.programs[4]);
  EXPECT_NE(job.programs[0], job.programs[4]);
  EXPECT_EQ(job.communicators[0].name, "world");
  EXPECT_EQ(job.communicators[0].ranks.size(), 8u);
  ValidateJobPrograms(job);
}

TEST(TransformerProgram, ContextParallelAttentionOverlapsEachExchangeWithABlock) {
  // c = 4 (ranks 0..3 are one ring): a layer's core attention computes four blocks and passes
  // keys and values on three times, each exchange in flight while the block before it computes.
  TransformerConfig c = Small(1, 1, 1, 1, PipelineSchedule::kOneFOneB);
  c.parallel.context = 4;
  const JobPrograms job = MakeTransformerJob(c);
  ASSERT_EQ(job.world_size(), 4);
  EXPECT_NE(job.programs[0], job.programs[1]) << "each place in the ring has its own peers";
  std::string order;
  for (const Op& op : job.programs[1]->ops) {
    if (op.label.rfind("F0 L0 attn core", 0) == 0) {
      order += op.label.substr(std::string("F0 L0 attn core ").size()) + " ";
      if (op.kind == OpKind::kTransfers) {
        ASSERT_EQ(op.transfers.size(), 2u);
        EXPECT_EQ(op.transfers[0].kind, coll::StepKind::kSend);
        EXPECT_EQ(op.transfers[0].peer, 2);
        EXPECT_EQ(op.transfers[1].kind, coll::StepKind::kRecv);
        EXPECT_EQ(op.transfers[1].peer, 0);
        // 8 of 32 tokens x 4 heads x 16 x 2 bytes, keys and values.
        EXPECT_EQ(op.transfers[0].bytes, 2u * 8 * 4 * 16 * 2);
      }
    }
  }
  EXPECT_EQ(order, "kv0 block0 kv1 block1 kv2 block2 block3 ");
  const auto& ops = job.programs[1]->ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::kTransfers || ops[i].label.rfind("F0 L0", 0) != 0) continue;
    // The block computes, then the rank waits for the exchange before the next block.
    ASSERT_LT(i + 2, ops.size());
    EXPECT_EQ(ops[i + 1].kind, OpKind::kCompute);
    EXPECT_EQ(ops[i + 2].kind, OpKind::kWait);
    EXPECT_EQ(ops[i + 2].target, i);
  }
}

TEST(TransformerProgram, ConfigurationErrorsNameTheField) {
  auto message = [](TransformerConfig c) -> std::string {
    try {
      ValidateTransformerConfig(c);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  TransformerConfig c = Small(3, 1, 1, 1, PipelineSchedule::kOneFOneB);
  EXPECT_NE(message(c).find("TransformerConfig.parallel.tensor"), std::string::npos);
  c = Small(1, 1, 2, 1, PipelineSchedule::kOneFOneB);
  c.global_batch = 3;
  EXPECT_NE(message(c).find("TransformerConfig.global_batch"), std::string::npos);
  c = Small(1, 8, 1, 1, PipelineSchedule::kOneFOneB);
  EXPECT_NE(message(c).find("TransformerConfig.parallel.pipeline"), std::string::npos);
  c = Small(1, 1, 2, 1, PipelineSchedule::kOneFOneB);
  c.parallel.expert = 2;
  EXPECT_NE(message(c).find("TransformerConfig.parallel.expert"), std::string::npos);
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.parallel.tensor = 2;
  c.parallel.data = 2;
  EXPECT_NE(message(c).find("TransformerConfig.sequence_parallel"), std::string::npos);
  // Interleaving: 4 layers do not split into 2 stages x 4 chunks; 3 micro-batches are no
  // multiple of 2 stages; one stage has nothing to interleave with; GPipe does not interleave.
  c = Small(1, 2, 1, 4, PipelineSchedule::kOneFOneB);
  c.virtual_stages = 4;
  EXPECT_NE(message(c).find("do not divide the 4 layers"), std::string::npos) << message(c);
  c = Small(1, 2, 1, 3, PipelineSchedule::kOneFOneB);
  c.virtual_stages = 2;
  EXPECT_NE(message(c).find("micro-batches (3)"), std::string::npos) << message(c);
  c = Small(1, 1, 1, 2, PipelineSchedule::kOneFOneB);
  c.virtual_stages = 2;
  EXPECT_NE(message(c).find("TransformerConfig.virtual_stages"), std::string::npos);
  c = Small(1, 2, 1, 2, PipelineSchedule::kGPipe);
  c.virtual_stages = 2;
  EXPECT_NE(message(c).find("TransformerConfig.virtual_stages"), std::string::npos);
  // Context parallelism: 32 tokens do not split into 2 x 3 chunks.
  c = Small(1, 1, 1, 1, PipelineSchedule::kOneFOneB);
  c.parallel.context = 3;
  EXPECT_NE(message(c).find("multiple of 2 x context (6)"), std::string::npos) << message(c);
  c.parallel.context = 2;
  EXPECT_EQ(message(c), "");
  // Ulysses splits each tensor rank's heads over the context ranks: 4 heads, t c = 8.
  c.parallel.tensor = 4;
  c.context_parallel_comm = ContextParallelComm::kA2a;
  EXPECT_NE(message(c).find("TransformerConfig.context_parallel_comm"), std::string::npos)
      << message(c);
  // Mixture-of-experts layers take it too.
  c.parallel.tensor = 1;
  c.shape.experts = 4;
  c.shape.top_k = 2;
  EXPECT_EQ(message(c), "");
}

TEST(MoeRouting, BalancedRoutingSendsEveryExpertItsShare) {
  // 8 experts on 4 ranks, top-2, 1000 tokens per rank: each expert gets 250 assignments from
  // each rank, each rank 500 from each rank (itself included).
  const MoeRouting r{8, 2, 4, 1000, 0.0, 1};
  for (uint64_t n : TokensPerExpert(r, 0, 0)) EXPECT_EQ(n, 250u);
  for (uint64_t n : RouteTokens(r, 3, 7)) EXPECT_EQ(n, 500u);
}

TEST(MoeRouting, SkewedRoutingConservesTokensAndChangesBetweenIterations) {
  const MoeRouting r{8, 2, 4, 1000, 1.2, 42};
  const auto a = TokensPerExpert(r, 0, 0);
  const auto b = TokensPerExpert(r, 1, 0);
  EXPECT_EQ(std::accumulate(a.begin(), a.end(), uint64_t{0}), 2000u);
  EXPECT_EQ(std::accumulate(b.begin(), b.end(), uint64_t{0}), 2000u);
  EXPECT_NE(a, b) << "a new popularity order every iteration";
  // Zipf 1.2 over 8 experts: weights 1/r^1.2 sum to 2.33, so the hottest takes 43% of the
  // 2000 assignments (858), under the cap of one copy per token (1000 of them).
  const uint64_t hottest = *std::max_element(a.begin(), a.end());
  EXPECT_GT(hottest, 600u);
  EXPECT_LE(hottest, 1000u) << "an expert receives a token at most once";
  EXPECT_EQ(TokensPerExpert(r, 0, 0), a) << "deterministic";
}

TEST(MoeRouting, PopularityIsCappedAtOneCopyPerToken) {
  // A very steep Zipf would give one expert more than every token; it gets each token once.
  const MoeRouting r{4, 2, 2, 100, 8.0, 3};
  const auto n = TokensPerExpert(r, 0, 0);
  EXPECT_EQ(std::accumulate(n.begin(), n.end(), uint64_t{0}), 200u);
  for (uint64_t x : n) EXPECT_LE(x, 100u);
}

TEST(MoeRouting, CapacityDropsWhatAnExpertCannotTakeAndPadsWhenAsked) {
  // Balanced, 4 experts, top-2, 10 tokens: 5 assignments each. C = 0.8: ceil(0.8 x 10 x 2 / 4)
  // = 4 each, 4 of the 20 dropped; C = 1.25: 6.25 -> 7, more than anyone gets, nothing drops;
  // padded, each gets its 7.
  MoeRouting r{4, 2, 2, 10, 0.0, 1};
  r.capacity_factor = 0.8;
  EXPECT_EQ(ExpertCapacity(r), 4u);
  EXPECT_EQ(TokensPerExpert(r, 0, 0), (std::vector<uint64_t>{4, 4, 4, 4}));
  EXPECT_EQ(RouteTokens(r, 0, 0), (std::vector<uint64_t>{8, 8, 8, 8}));
  r.capacity_factor = 1.25;
  EXPECT_EQ(TokensPerExpert(r, 0, 0), (std::vector<uint64_t>{5, 5, 5, 5}));
  r.pad_to_capacity = true;
  EXPECT_EQ(TokensPerExpert(r, 0, 0), (std::vector<uint64_t>{7, 7, 7, 7}));
  // A capacity never exceeds one copy of each token: C = 4 would be 20 of 10 tokens.
  r.capacity_factor = 4;
  EXPECT_EQ(ExpertCapacity(r), 10u);
  // Steep skew on 2 experts, top-1, 10 tokens: one expert takes all 10 (weights 1 and 2^-10);
  // C = 1 caps it at ceil(10 / 2) = 5, so half the tokens are dropped.
  MoeRouting steep{2, 1, 1, 10, 10.0, 5};
  auto uncapped = TokensPerExpert(steep, 0, 0);
  std::sort(uncapped.begin(), uncapped.end());
  EXPECT_EQ(uncapped, (std::vector<uint64_t>{0, 10}));
  steep.capacity_factor = 1;
  auto capped = TokensPerExpert(steep, 0, 0);
  std::sort(capped.begin(), capped.end());
  EXPECT_EQ(capped, (std::vector<uint64_t>{0, 5}));
  steep.capacity_factor = 0;
  steep.pad_to_capacity = true;
  EXPECT_THROW(TokensPerExpert(steep, 0, 0), std::invalid_argument);
}

TEST(MoeRouting, TheCapacityEffectCountsDroppedAndPaddedAssignments) {
  // Zipf 1 over 4 experts, top-2, 32 tokens: weights 1, 1/2, 1/3, 1/4 over 25/12 give 30.72,
  // 15.36, 10.24 and 7.68 of the 64 assignments; floors 30, 15, 10, 7 and the two largest
  // remainders (0.72, 0.68) one more each: 31, 15, 10, 8, in a new order every layer.
  MoeRouting r{4, 2, 2, 32, 1.0, 7};
  auto counts = TokensPerExpert(r, 0, 0);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<uint64_t>{8, 10, 15, 31}));
  // Dropless: nothing dropped or padded.
  const CapacityEffect dropless = CapacityEffectOf(r, 0, 0);
  EXPECT_EQ(dropless.assignments, 64u);
  EXPECT_EQ(dropless.dropped, 0u);
  EXPECT_EQ(dropless.padding, 0u);
  // C = 1: ceil(32 x 2 / 4) = 16 each; the hot expert drops 31 - 16 = 15, whatever the layer.
  r.capacity_factor = 1;
  for (int layer = 0; layer < 3; ++layer) {
    const CapacityEffect capped = CapacityEffectOf(r, 1, layer);
    EXPECT_EQ(capped.dropped, 15u) << layer;
    EXPECT_EQ(capped.padding, 0u) << layer;
  }
  // Padded, the three others fill up to 16: 6 + 1 + 8 = 15 empty slots.
  r.pad_to_capacity = true;
  const CapacityEffect padded = CapacityEffectOf(r, 0, 0);
  EXPECT_EQ(padded.dropped, 15u);
  EXPECT_EQ(padded.padding, 15u);
}

}  // namespace
}  // namespace nbox::work
