// The memory estimate of transformer jobs (workloads/transformer_memory.h) against the figures
// and formulas it comes from: ZeRO's per-device model states for a 7.5B-parameter model on 64
// data-parallel GPUs (Rajbhandari et al. 2020, Figure 1) and Korthikanti et al. 2022's
// activations per layer (Table 2) and per interleaved pipeline, worked out by hand.
#include "workloads/transformer_memory.h"

#include <gtest/gtest.h>

#include <utility>

#include "tests/workloads/small_transformer.h"

namespace nbox::work {
namespace {

TEST(TransformerMemory, ModelStatesAreZerosFigureOne) {
  // Figure 1: Psi = 7.5B, N_d = 64, K = 12: 120 GB per device for the baseline (ddp), 31.4 GB
  // partitioning the optimizer states (zero1), 16.6 GB with the gradients too (zero2), 1.9 GB
  // with the parameters too (fsdp). Per parameter here, scaled to 7.5B; the figure rounds to
  // 0.1 GB.
  struct Case {
    DataParallelMode mode;
    double published_gb;
  };
  for (const Case& k : {Case{DataParallelMode::kDdp, 120.0}, Case{DataParallelMode::kZero1, 31.4},
                        Case{DataParallelMode::kZero2, 16.6}, Case{DataParallelMode::kFsdp, 1.9}}) {
    TransformerConfig c = testing::SmallTransformer(1, 1, 64, 1, PipelineSchedule::kOneFOneB);
    c.data_parallel_mode = k.mode;
    const StageMemory m = EstimateStageMemory(c).at(0);
    const double gb_at_7_5b = m.ModelStatesBytes() / static_cast<double>(m.parameters) * 7.5;
    EXPECT_NEAR(gb_at_7_5b, k.published_gb, 0.05) << static_cast<int>(k.mode);
  }
}

// s = 128, b = 1, h = 256, a = 4, t = 2, the 4h GeLU MLP of Korthikanti et al.'s GPT layer,
// attention that keeps its scores (no flash attention).
TransformerConfig ScoresKeptCase() {
  TransformerConfig c = testing::SmallTransformer(2, 1, 1, 1, PipelineSchedule::kOneFOneB);
  c.shape.seq_len = 128;
  c.shape.hidden = 256;
  c.shape.heads = 4;
  c.shape.ffn = 1024;
  c.flash_attention = false;
  return c;
}

// Stage 0's estimate under zero1 of `c` on d = 2 replicas of c = 2 context ranks, and of the
// same job on d = 4 replicas without context parallelism.
std::pair<StageMemory, StageMemory> WithContextAndAsFourReplicas(TransformerConfig c) {
  c.data_parallel_mode = DataParallelMode::kZero1;
  c.parallel.context = 2;
  c.parallel.data = 2;
  c.global_batch = 2;
  const StageMemory with_context = EstimateStageMemory(c).at(0);
  c.parallel.context = 1;
  c.parallel.data = 4;
  c.global_batch = 4;
  return {with_context, EstimateStageMemory(c).at(0)};
}

TEST(TransformerMemory, ActivationsPerLayerFollowKorthikantisTableTwo) {
  // ScoresKeptCase: s b h = 32768; 5 a s / (h t) = 5.
  TransformerConfig c = ScoresKeptCase();
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * (10 + 24 / 2 + 5));  // tensor parallel
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * (10 + 24 / 2));
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * 34 / 2);
  c.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * (34 / 2 + 5));
  c.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 2 * 32768.0 / 2);  // the input, split by sequence
  c.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 2 * 32768.0);
  // Flash attention keeps no scores: the memory of selective recomputation, without its FLOPs.
  c.recompute = Recompute::kNone;
  c.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * (10 + 24 / 2));
}

TEST(TransformerMemory, TheMlpTermsFollowItsWidthAndGate) {
  // With sequence parallelism and no scores kept, Megatron's theoretical_memory_usage.py gives
  // s b h (18 + 4 f / h) / t per layer for a GeLU MLP of width f.
  TransformerConfig c = ScoresKeptCase();
  c.flash_attention = true;
  c.sequence_parallel = true;
  for (int ffn : {256, 512, 896, 1024, 2048}) {
    c.shape.ffn = ffn;
    EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * (18 + 4.0 * ffn / 256) / 2) << ffn;
  }
  // Without sequence parallelism and f = 2h: 10 + (8 + 4 x 2) / 2 = 18 s b h. A gated MLP also
  // keeps its gate's output, f more elements per token: 10 + (8 + 6 x 2) / 2 = 20.
  c.sequence_parallel = false;
  c.shape.ffn = 512;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * 18);
  c.shape.gated_mlp = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * 20);
  // 32-bit activations keep twice the bytes, also of full recomputation's input.
  c.activation_bytes = 4;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 32768.0 * 40);
  c.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 4 * 32768.0);
}

TEST(TransformerMemory, TheEmbeddingAndTheLogitsAreKeptOnTheEndStages) {
  // s = 128, b = 1, h = 256, V = 1000, t = 2. The embedding keeps 8-byte token ids and a
  // 1-byte dropout mask per element: 8 x 128 + 128 x 256 = 33792 bytes (sequence parallel:
  // the mask split, 1024 + 16384). The end keeps the final norm's and the output layer's
  // inputs, 2 x 2 s b h = 131072 (sequence parallel: split), and fp32 logits of V / t words,
  // 4 x 128 x 500 = 256000; with sequence parallelism Megatron's 4 s b h (1 + V / h) / t.
  TransformerConfig c = ScoresKeptCase();
  c.shape.vocab = 1000;
  EXPECT_DOUBLE_EQ(EmbeddingActivationBytes(c), 33792.0);
  EXPECT_DOUBLE_EQ(OutputActivationBytes(c), 131072.0 + 256000.0);
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(EmbeddingActivationBytes(c), 1024.0 + 16384.0);
  EXPECT_DOUBLE_EQ(OutputActivationBytes(c), 4.0 * 128 * 256 * (1 + 1000.0 / 256) / 2);
  // Context parallelism: the rank's 64 tokens.
  c.parallel.context = 2;
  EXPECT_DOUBLE_EQ(OutputActivationBytes(c), 4.0 * 64 * 256 * (1 + 1000.0 / 256) / 2);

  // Per stage, times the micro-batches in flight there: p = 4, m = 8. 1F1B: the first stage
  // holds p = 4 micro-batches' embeddings, the last one micro-batch's logits; GPipe all 8 of
  // each; interleaved with m = p (its warm-up runs every forward first), all 4 of each.
  c = testing::SmallTransformer(1, 4, 1, 8, PipelineSchedule::kOneFOneB);
  c.shape.layers = 16;
  const double embedding = EmbeddingActivationBytes(c);
  const double output = OutputActivationBytes(c);
  auto ends = [&] {
    const std::vector<StageMemory> stages = EstimateStageMemory(c);
    for (const StageMemory& m : stages) {
      EXPECT_DOUBLE_EQ(m.activations_bytes, m.layers_in_flight * LayerActivationBytes(c) +
                                                m.embedding_activations_bytes +
                                                m.output_activations_bytes);
    }
    EXPECT_EQ(stages[1].embedding_activations_bytes + stages[2].output_activations_bytes, 0);
    return std::pair<double, double>{stages.front().embedding_activations_bytes / embedding,
                                     stages.back().output_activations_bytes / output};
  };
  EXPECT_EQ(ends(), (std::pair<double, double>{4, 1}));
  c.schedule = PipelineSchedule::kGPipe;
  EXPECT_EQ(ends(), (std::pair<double, double>{8, 8}));
  c.schedule = PipelineSchedule::kOneFOneB;
  c.virtual_stages = 2;
  c.global_batch = 4;
  EXPECT_EQ(ends(), (std::pair<double, double>{4, 4}));
}

TEST(TransformerMemory, ContextParallelismSplitsActivationsAndShardsOverDataAndContext) {
  // The case above with c = 2: a rank keeps its 64 tokens' activations, s b h / c = 16384, and
  // each of their queries scores all 128 keys, so the attention term stays 5 a s / (h t) = 5.
  TransformerConfig c = ScoresKeptCase();
  c.parallel.context = 2;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 16384.0 * (10 + 24 / 2 + 5));
  // ZeRO partitions over the 2 x 2 ranks that reduce the gradients: zero1's optimizer state
  // is a quarter of ddp's, as on d = 4 without context parallelism.
  const auto [with_context, four_replicas] = WithContextAndAsFourReplicas(c);
  EXPECT_DOUBLE_EQ(with_context.optimizer_bytes,
                   12.0 * static_cast<double>(with_context.parameters) / 4);
  EXPECT_DOUBLE_EQ(with_context.optimizer_bytes, four_replicas.optimizer_bytes);
}

TEST(TransformerMemory, StagesHoldTheMicroBatchesTheirScheduleStashes) {
  // p = 4, 16 layers (4 per stage), m = 8. 1F1B: stage s holds p - s micro-batches, so stage 0
  // the layers of one whole model; GPipe all 8; interleaved with v = 2, stage 0 holds
  // L (1 + (p - 1) / (p v)) = 22 layers (Korthikanti et al.'s interleaved case) and stage 3 its 5
  // warm-up and first steps of 2 layers.
  TransformerConfig c = testing::SmallTransformer(1, 4, 1, 8, PipelineSchedule::kOneFOneB);
  c.shape.layers = 16;
  auto layers = [&] {
    std::vector<double> out;
    for (const StageMemory& m : EstimateStageMemory(c)) out.push_back(m.layers_in_flight);
    return out;
  };
  EXPECT_EQ(layers(), (std::vector<double>{16, 12, 8, 4}));
  c.schedule = PipelineSchedule::kGPipe;
  EXPECT_EQ(layers(), (std::vector<double>{32, 32, 32, 32}));
  c.schedule = PipelineSchedule::kOneFOneB;
  c.virtual_stages = 2;
  EXPECT_EQ(layers().front(), 22);
  EXPECT_EQ(layers().back(), 10);
}

// SmallTransformer's 4 layers (s = 32, b = 1, h = 64, f = 256 GeLU, V = 100, flash attention)
// with 4 experts, top 2, over an expert-parallel group of 2 data-parallel ranks.
TransformerConfig SmallMoe(int t = 1) {
  TransformerConfig c = testing::SmallTransformer(t, 1, 2, 1, PipelineSchedule::kOneFOneB);
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.parallel.expert = 2;
  return c;
}

// A rank's stage-0 activations of SmallMoe's one micro-batch besides its 4 layers: the
// embedding's 8 x 32 token-id bytes and 32 x 64 mask bytes (2304), the end's 2 x 2 x 32 x 64
// norm and output inputs and 4 x 32 x 100 fp32 logits (20992).
constexpr double kSmallMoeEnds = 2304 + 20992;

TEST(TransformerMemory, AnExpertLayerKeepsWhatItsRouterExpertsAndCombineNeed) {
  // Balanced and dropless, each rank routes its 32 tokens to 2 of 4 experts: it sends 64
  // assignments, and its 2 experts receive 16 from each of the 2 ranks, 64 in all. Per layer:
  // the attention half, (7 + 8) s b h = 15 x 2048 = 30720; the router's input, the dropout's
  // mask and fp32 probabilities, 32 x (3 x 64 + 4 x 4) = 6656; the experts' inputs and GeLU
  // activations, 64 x (2 x 64 + 4 x 256) = 73728; the outputs the combine weights, 64 x 2 x 64
  // = 8192.
  const TransformerConfig c = SmallMoe();
  constexpr double kLayer = 30720 + 6656 + 73728 + 8192;
  EXPECT_DOUBLE_EQ(ExpertLayerActivationBytes(c, {32, 64, 64}), kLayer);
  // The dense layer of the same shape keeps 34 s b h: the experts add the router, a second
  // copy of the expert outputs, and a top-2 MLP's activations.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 34 * 2048.0);
  EXPECT_DOUBLE_EQ(EstimateStageMemory(c).at(0).activations_bytes, 4 * kLayer + kSmallMoeEnds);
  // Every other layer an MoE layer: layers 1 and 3 keep a dense layer's 34 s b h.
  TransformerConfig alternate = c;
  alternate.shape.moe_layer_freq = 2;
  EXPECT_DOUBLE_EQ(EstimateStageMemory(alternate).at(0).activations_bytes,
                   2 * kLayer + 2 * 34 * 2048.0 + kSmallMoeEnds);
  // A shared expert of width 128 keeps its GeLU activations for all 32 tokens: 32 x 4 x 128.
  TransformerConfig shared = c;
  shared.shape.shared_expert_ffn = 128;
  EXPECT_DOUBLE_EQ(ExpertLayerActivationBytes(shared, {32, 64, 64}), kLayer + 16384);
  // Full recomputation keeps only the layer's input, 2 s b h, as for a dense layer.
  TransformerConfig full = c;
  full.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(ExpertLayerActivationBytes(full, {32, 64, 64}), 2 * 2048.0);
  EXPECT_DOUBLE_EQ(EstimateStageMemory(full).at(0).activations_bytes,
                   4 * 2 * 2048.0 + kSmallMoeEnds);
}

TEST(TransformerMemory, SequenceParallelismHalvesAnExpertLayerOnTwoTensorRanks) {
  // t = 2 with sequence parallelism: each rank routes 16 tokens, sends 32 assignments and
  // receives 32; every term of the balanced layer above halves (59648). The ends: 8 x 32 + 2048
  // / 2 (1280), 8192 / 2 + 4 x 32 x 50 (10496).
  TransformerConfig c = SmallMoe(2);
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(EstimateStageMemory(c).at(0).activations_bytes, 4 * 59648.0 + 1280 + 10496);
}

TEST(TransformerMemory, PaddedExpertsKeepTheirCapacityWhateverTheRouting) {
  // C = 1.5: each expert takes at most ceil(1.5 x 32 x 2 / 4) = 24 of a rank's assignments,
  // and padded receives exactly that: a rank sends 4 x 24 = 96 and its 2 experts receive
  // 2 x 2 x 24 = 96. Per layer 30720 + 6656 + 96 x 1152 + 96 x 128 = 160256, skewed or not.
  TransformerConfig c = SmallMoe();
  c.expert_capacity_factor = 1.5;
  c.pad_to_capacity = true;
  for (double skew : {0.0, 1.5}) {
    c.routing_skew = skew;
    EXPECT_DOUBLE_EQ(EstimateStageMemory(c).at(0).activations_bytes, 4 * 160256.0 + kSmallMoeEnds)
        << skew;
  }
}

TEST(TransformerMemory, SkewedRoutingLoadsTheHotExpertsRank) {
  // Dropless and skewed, every rank still sends 64 assignments, but the rank holding the
  // popular experts receives more than 64 of the 128: its layers keep more than balanced ones,
  // and less than if it received all 128.
  TransformerConfig c = SmallMoe();
  c.routing_skew = 1.5;
  c.iterations = 3;
  const double skewed = EstimateStageMemory(c).at(0).activations_bytes;
  EXPECT_GT(skewed, 4 * ExpertLayerActivationBytes(c, {32, 64, 64}) + kSmallMoeEnds);
  EXPECT_LT(skewed, 4 * ExpertLayerActivationBytes(c, {32, 64, 128}) + kSmallMoeEnds);
}

TEST(TransformerMemory, ExpertStatesArePartitionedOverExpertDataAndContext) {
  // e = 2 with d = 2 and c = 2 against d = 4 and c = 1: the same experts sit on 2 ranks either
  // way (expert data x context), the dense parameters on 4, so zero1 partitions the optimizer
  // state alike.
  TransformerConfig c = testing::SmallTransformer(1, 1, 2, 1, PipelineSchedule::kOneFOneB);
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.parallel.expert = 2;
  const auto [with_context, four_replicas] = WithContextAndAsFourReplicas(c);
  EXPECT_EQ(with_context.parameters, four_replicas.parameters);
  EXPECT_DOUBLE_EQ(with_context.optimizer_bytes, four_replicas.optimizer_bytes);
}

}  // namespace
}  // namespace nbox::work
