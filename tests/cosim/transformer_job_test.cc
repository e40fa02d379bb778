// Transformer jobs simulated on a star, against closed forms worked out from Megatron-LM's
// rules (Shoeybi et al. 2019; Narayanan et al. 2021) independently of the generator: the bytes
// every pair of ranks exchanges per parallelism, the pipeline bubble on a network made
// infinitely fast, conservation and determinism.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"
#include "workloads/transformer.h"

namespace nbox::testing {
namespace {

using work::Parallelism;
using work::PipelineSchedule;
using work::TransformerConfig;

// A small dense GPT-style model (two-matrix MLP, untied output, rotary positions).
constexpr int kLayers = 4;
constexpr uint64_t kHidden = 256;
constexpr uint64_t kFfn = 1024;
constexpr uint64_t kVocab = 500;
constexpr uint64_t kSeq = 128;

TransformerConfig SmallModel(int t, int p, int d, int microbatches) {
  TransformerConfig c;
  c.shape.name = "small";
  c.shape.layers = kLayers;
  c.shape.hidden = static_cast<int>(kHidden);
  c.shape.heads = 4;
  c.shape.ffn = static_cast<int>(kFfn);
  c.shape.vocab = static_cast<int>(kVocab);
  c.shape.seq_len = static_cast<int>(kSeq);
  c.parallel = {t, p, d, 1, "tp-dp-pp"};
  c.micro_batch = 1;
  c.global_batch = microbatches * d;
  c.iterations = 1;
  c.bucket_bytes = 64ull << 20;  // one bucket per stage
  return c;
}

// Bytes from src to dst summed over channels, per parallelism of the communicator.
std::map<std::tuple<Parallelism, uint32_t, uint32_t>, uint64_t> PairBytes(
    const JobOutcome& out, const work::JobPrograms& job) {
  std::map<std::tuple<Parallelism, uint32_t, uint32_t>, uint64_t> pairs;
  for (const auto& [key, bytes] : out.traffic) {
    const auto [src, dst, comm, channel] = key;
    pairs[{job.communicators[comm].parallelism, src, dst}] += bytes;
  }
  return pairs;
}

// Runs `job` on a non-blocking star of `rate_bps` links with 9000-byte packets.
JobOutcome RunOnJumboStar(const work::JobPrograms& job, double rate_bps = 100e9) {
  StarJob setup;
  setup.world = job.world_size();
  setup.rate_bps = rate_bps;
  setup.network.mtu = 9000;
  return RunOnStar(setup, job);
}

// Runs `job` on the jumbo star, expecting every byte it sends to arrive.
JobOutcome RunConserved(const work::JobPrograms& job) {
  JobOutcome out = RunOnJumboStar(job);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes) << "bytes conserved";
  return out;
}

// Expects the iteration's compute (the busiest rank's, `rank`'s program) to be m micro-batches
// of `tokens` tokens each through `layers` layers, `layer_passes` forward-equivalents of a
// layer's dense part and `core_passes` of its core attention (4 s h FLOPs per token), and the
// logits' forward and backward (3 passes), all over t = 2, at the configuration's achieved
// FLOP rate. Each compute op lasts a whole number of nanoseconds in the simulator.
void ExpectComputePerIteration(const JobOutcome& out, const work::JobPrograms& job, int rank,
                               const TransformerConfig& c, uint64_t m, double tokens, double layers,
                               double layer_passes, double core_passes) {
  const double dense_flops = (8.0 * kHidden * kHidden + 4.0 * kHidden * kFfn) / 2;
  const double core_flops = 4.0 * kSeq * kHidden / 2;
  const double logits_flops = 2.0 * kHidden * kVocab / 2;
  const double achieved = c.compute.peak_flops * c.compute.utilization;
  const double per_microbatch =
      tokens *
      (layers * (layer_passes * dense_flops + core_passes * core_flops) + 3 * logits_flops) /
      achieved;
  int ops = 0;
  for (const work::Op& op : job.programs[static_cast<size_t>(rank)]->ops) {
    ops += op.kind == work::OpKind::kCompute;
  }
  EXPECT_NEAR(out.summary.iterations[0].compute_s, static_cast<double>(m) * per_microbatch,
              ops * 1e-9);
}

// A 4-expert top-2 MoE on 2 ranks, t = p = 1, d = e = 2, one micro-batch of one sequence.
TransformerConfig TwoRankMoe() {
  TransformerConfig c = SmallModel(1, 1, 2, 1);
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.parallel.expert = 2;
  return c;
}

TEST(TransformerJob, EveryPairCarriesWhatMegatronsRulesSay) {
  // t = 2, p = 2, d = 2 on 8 ranks (tp-dp-pp: rank = tp + 2 dp + 4 pp), 4 micro-batches of one
  // 128-token sequence, bf16 activations and gradients.
  const TransformerConfig c = SmallModel(2, 2, 2, 4);
  const work::JobPrograms job = work::MakeTransformerJob(c);
  const JobOutcome out = RunOnJumboStar(job);
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes) << "bytes conserved";
  const auto pairs = PairBytes(out, job);

  const uint64_t m = 4;
  const uint64_t s = 1 * kSeq * kHidden * 2;  // one micro-batch's activations, b s h
  // TP: a 2-rank all-reduce sends its whole buffer to the peer. Per micro-batch, stage 0: the
  // embedding's all-reduce, two per layer forward and two per layer backward (2 layers): 9;
  // stage 1: four forward, the logits' input gradient and four backward: 9, plus the
  // vocabulary-parallel cross entropy's three all-reduces of one fp32 per token.
  EXPECT_EQ((pairs.at({Parallelism::kTensor, 0, 1})), m * 9 * s);
  EXPECT_EQ((pairs.at({Parallelism::kTensor, 5, 4})), m * (9 * s + 3 * kSeq * 4));
  // PP: every micro-batch's activations forward, their gradients back, b s h each.
  EXPECT_EQ((pairs.at({Parallelism::kPipeline, 2, 6})), m * s);
  EXPECT_EQ((pairs.at({Parallelism::kPipeline, 6, 2})), m * s);
  // DP: a 2-rank ring all-reduce of the stage's gradients (2 bytes each) sends them once.
  // Megatron splits the matrices and the vocabulary over the t = 2 tensor ranks and gives each
  // the norms whole. Per layer: attention 4 h^2 and MLP 2 h ffn split, two norms 2h whole;
  // stage 0 adds the embedding (vocab h, split), stage 1 the output layer (vocab h, split) and
  // the final norm (h, whole).
  const uint64_t matrices = 4 * kHidden * kHidden + 2 * kHidden * kFfn;
  const uint64_t norms = 2 * kHidden;
  const uint64_t stage0 = ((2 * matrices + kVocab * kHidden) / 2 + 2 * norms) * 2;
  const uint64_t stage1 = ((2 * matrices + kVocab * kHidden) / 2 + 2 * norms + kHidden) * 2;
  EXPECT_EQ((pairs.at({Parallelism::kData, 1, 3})), stage0);
  EXPECT_EQ((pairs.at({Parallelism::kData, 7, 5})), stage1);
  // Nothing else crosses between data-parallel replicas or pipeline stages.
  for (const auto& [key, bytes] : pairs) {
    const auto [parallelism, src, dst] = key;
    if (parallelism == Parallelism::kTensor) {
      EXPECT_EQ(src / 2, dst / 2);
    }
    if (parallelism == Parallelism::kData) {
      EXPECT_EQ(src % 2, dst % 2);
    }
  }
}

// The bubble of a pipeline with equal stages on a network made infinitely fast (10 Tb/s
// links, 1 ns latency, no tensor or data parallelism): (p - 1) / (m + p - 1) of the iteration
// (Narayanan et al. 2021, Sec. 2.2.1), the same for GPipe and 1F1B.
void ExpectBubbleRatio(PipelineSchedule schedule, int v = 1) {
  const int p = 4;
  const int m = 8;
  TransformerConfig c = SmallModel(1, p, 1, m);
  c.shape.layers = 8 * v;  // two per stage and chunk
  c.shape.vocab = 1;       // no logits to speak of: the last stage computes what the others do
  c.schedule = schedule;
  c.virtual_stages = v;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  StarJob setup;
  setup.world = p;
  setup.rate_bps = 10e12;
  setup.latency_s = 1e-9;
  setup.network.mtu = 9000;
  const JobOutcome out = RunOnStar(setup, job);
  ASSERT_TRUE(out.finished);
  const auto& it = out.summary.iterations[0];
  // With v chunks per stage each bubble step is a chunk's, 1/v of a stage's work: the bubble
  // is (p - 1) / (v m) of the ideal time, (p - 1) / (v m + p - 1) of the iteration (ibid.,
  // Sec. 2.2.2).
  const double expected = static_cast<double>(p - 1) / (v * m + p - 1);
  std::printf("v=%d: bubble %.4f of the iteration, (p-1)/(v m+p-1) = %.4f\n", v,
              it.breakdown.bubble_s / it.time_s, expected);
  EXPECT_NEAR(it.breakdown.bubble_s / it.time_s, expected, 0.01);
}

// MFU (model FLOPs over the GPUs' peak in the iteration's time) on a network made infinitely
// fast: every GPU computes at the configured utilization but in the pipeline's bubble, (p - 1)
// / (m + p - 1) of the iteration with 1F1B. One stage on 4 data-parallel GPUs gives the
// utilization itself; 4 stages of 8 micro-batches 8 / 11 of it.
TEST(TransformerJob, ModelFlopsUtilizationIsTheUtilizationButTheBubble) {
  for (const auto& [p, d] : {std::pair{1, 4}, std::pair{4, 1}}) {
    SCOPED_TRACE(p);
    const int m = 8;
    TransformerConfig c = SmallModel(1, p, d, m);
    c.shape.layers = 8;
    c.shape.vocab = 1;  // no logits to speak of: every stage computes the same
    const work::JobPrograms job = work::MakeTransformerJob(c);
    StarJob setup;
    setup.world = p * d;
    setup.rate_bps = 10e12;
    setup.latency_s = 1e-9;
    setup.network.mtu = 9000;
    const JobOutcome out = RunOnStar(setup, job);
    ASSERT_TRUE(out.finished);
    const double mfu = c.ModelFlopsPerIteration() / out.summary.iterations[0].time_s / setup.world /
                       c.compute.peak_flops;
    EXPECT_NEAR(mfu / (c.compute.utilization * m / (m + p - 1)), 1.0, 0.02);
  }
}

TEST(TransformerJob, OneFOneBBubbleRatioOnAnInfinitelyFastNetwork) {
  ExpectBubbleRatio(PipelineSchedule::kOneFOneB);
}

TEST(TransformerJob, GPipeBubbleRatioOnAnInfinitelyFastNetwork) {
  ExpectBubbleRatio(PipelineSchedule::kGPipe);
}

// Interleaving on two stages (each one's next stage is also its previous: the last stage's
// chunk 0 feeds the first stage's chunk 1) with tensor and data parallelism: the job finishes,
// every byte arrives, and each pipeline pair carries what the virtual stages' boundaries say.
// Virtual stages 0..3 are (stage 0, chunk 0), (1, 0), (0, 1), (1, 1): forward activations
// cross 0 -> 1, 1 -> 0 and 0 -> 1, gradients the reverse, so each direction carries three
// messages of b s h per micro-batch.
TEST(TransformerJob, InterleavedPipelineOnTwoStagesCarriesEveryBoundary) {
  const uint64_t m = 4;
  TransformerConfig c = SmallModel(2, 2, 2, static_cast<int>(m));
  c.virtual_stages = 2;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  const JobOutcome out = RunOnJumboStar(job);
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes) << "bytes conserved";
  const auto pairs = PairBytes(out, job);
  const uint64_t s = 1 * kSeq * kHidden * 2;
  EXPECT_EQ((pairs.at({Parallelism::kPipeline, 2, 6})), m * 3 * s);
  EXPECT_EQ((pairs.at({Parallelism::kPipeline, 6, 2})), m * 3 * s);
}

TEST(TransformerJob, InterleavedOneFOneBBubbleRatioOnAnInfinitelyFastNetwork) {
  ExpectBubbleRatio(PipelineSchedule::kOneFOneB, 2);
  ExpectBubbleRatio(PipelineSchedule::kOneFOneB, 4);
}

TEST(TransformerJob, IterationMatchesTheAnalyticalComposition) {
  // The characterisation study's composition (Li et al., "Communication Matters in DNN
  // Training", APNet 2024): T = m (c + tp + pp) + dp + (p - 1)(c + tp + pp), with c a
  // micro-batch's compute on one stage, tp its tensor-parallel all-reduces, pp its two
  // pipeline transfers and dp the stage's gradient all-reduce after the backward (one bucket,
  // so nothing overlaps it), each from alpha-beta on a non-blocking 100 Gb/s star. Stages
  // are taken to be equal: the last one, which also computes the logits and the cross
  // entropy's three small all-reduces, sets the pace; the gradient norm's all-reduce of the
  // four model-parallel ranks ends the iteration.
  const TransformerConfig c = SmallModel(2, 2, 2, 4);
  const work::JobPrograms job = work::MakeTransformerJob(c);
  StarJob setup;
  setup.world = 8;
  setup.rate_bps = 100e9;
  setup.network.mtu = 9000;
  const JobOutcome out = RunOnStar(setup, job);
  ASSERT_TRUE(out.finished);

  const double rate = setup.rate_bps;
  const double latency = setup.latency_s;
  const uint32_t mtu = setup.network.mtu;
  const double tokens = kSeq;
  // Forward FLOPs per token of one layer, per tensor-parallel rank: QKV and output 8 h^2,
  // attention scores 4 s h, MLP 4 h ffn (Narayanan et al. 2021, Eq. 3), over t = 2; the
  // logits 2 h V over t. Backward is twice the forward.
  const double layer_flops =
      (8.0 * kHidden * kHidden + 4.0 * kSeq * kHidden + 4.0 * kHidden * kFfn) / 2;
  const double logits_flops = 2.0 * kHidden * kVocab / 2;
  const double achieved = c.compute.peak_flops * c.compute.utilization;
  const double compute_mb = tokens * (2 * layer_flops + logits_flops) * (1 + 2) / achieved;
  const double s = kSeq * kHidden * 2.0;
  const double tp_mb = 9 * AlphaBetaSeconds(2, s, rate, latency, mtu) +
                       3 * AlphaBetaSeconds(2, kSeq * 4.0, rate, latency, mtu);
  const double pp_mb = 2 * PointToPointSeconds(s, rate, latency, mtu);
  const uint64_t layer = 4 * kHidden * kHidden + 2 * kHidden * kFfn + 2 * kHidden;
  const double dp =
      AlphaBetaSeconds(2, (2.0 * layer + kVocab * kHidden + kHidden) / 2 * 2, rate, latency, mtu);
  const double grad_norm = AlphaBetaSeconds(4, 4, rate, latency, mtu);
  const double m = 4;
  const double p = 2;
  const double expected = (m + p - 1) * (compute_mb + tp_mb + pp_mb) + dp + grad_norm;
  const double measured = out.summary.iterations[0].time_s;
  std::printf(
      "simulated %.6f s, composition %.6f s (compute %.6f, tp %.6f, pp %.6f per "
      "micro-batch, dp %.6f), ratio %.3f\n",
      measured, expected, compute_mb, tp_mb, pp_mb, dp, measured / expected);
  EXPECT_NEAR(measured / expected, 1.0, 0.05);
}

// Activation recomputation (Korthikanti et al. 2022) on the job of
// EveryPairCarriesWhatMegatronsRulesSay: full recomputation runs every layer's forward again before
// its backward, its two tensor-parallel all-reduces included (9 -> 13 per micro-batch on each
// stage); selective recomputation runs only the core attention again (4 s h FLOPs per token and
// layer, over t), with no communication. Compute is the last stage's (it adds the logits), worked
// out by hand.
TEST(TransformerJob, RecomputationAddsTheForwardItRunsAgain) {
  const uint64_t m = 4;
  const uint64_t s = 1 * kSeq * kHidden * 2;
  struct Case {
    work::Recompute recompute;
    uint64_t tp_per_microbatch;
    double layer_passes;  // forward-equivalents of a layer's dense part per micro-batch
    double core_passes;   // the same for its core attention
  };
  for (const Case& k :
       {Case{work::Recompute::kNone, 9, 3, 3}, Case{work::Recompute::kSelective, 9, 3, 4},
        Case{work::Recompute::kFull, 13, 4, 4}}) {
    SCOPED_TRACE(static_cast<int>(k.recompute));
    TransformerConfig c = SmallModel(2, 2, 2, static_cast<int>(m));
    c.recompute = k.recompute;
    const work::JobPrograms job = work::MakeTransformerJob(c);
    const JobOutcome out = RunConserved(job);
    ASSERT_TRUE(out.finished);
    const auto pairs = PairBytes(out, job);
    EXPECT_EQ((pairs.at({Parallelism::kTensor, 0, 1})), m * k.tp_per_microbatch * s);
    EXPECT_EQ((pairs.at({Parallelism::kTensor, 5, 4})),
              m * (k.tp_per_microbatch * s + 3 * kSeq * 4));
    ExpectComputePerIteration(out, job, 4, c, m, kSeq, 2, k.layer_passes, k.core_passes);
  }
}

// Context parallelism, t = 2, c = 2, d = 2 on 8 ranks (tp-dp-pp places cp right after tp: rank =
// tp + 2 cp + 4 dp), one stage, 2 micro-batches. Each rank holds 64 of the 128 tokens. Per layer
// and micro-batch its keys and values (64 tokens x 2 of the 4 heads x 64 x 2 bytes, K and V)
// go once around the two-rank ring in the forward, and with their gradients (twice the bytes)
// in the backward; selective and full recomputation run the forward ring again. Tensor
// parallelism all-reduces the local tokens' activations, 18 times per micro-batch (embedding,
// 2 per layer forward and backward, the logits' input gradient) plus the cross entropy's three
// fp32 per local token; gradients are all-reduced over data x context ranks, a 4-rank ring that
// sends 2 (4 - 1) / 4 of them from each rank. Compute: the core attention of 64 queries against
// all 128 keys, half of a rank's without context parallelism.
TEST(TransformerJob, ContextParallelismPassesKeysAndValuesAroundTheRing) {
  const uint64_t m = 2;
  const uint64_t local = kSeq / 2;
  const uint64_t kv = 2 * local * 2 * (kHidden / 4) * 2;
  const uint64_t s = local * kHidden * 2;
  // A rank's gradients: the matrices and both vocabulary tables split over t = 2, the norms
  // (two a layer and the final one) whole.
  const uint64_t matrices = 4 * kHidden * kHidden + 2 * kHidden * kFfn;
  const uint64_t gradients =
      ((kLayers * matrices + 2 * kVocab * kHidden) / 2 + kLayers * 2 * kHidden + kHidden) * 2;
  struct Case {
    work::Recompute recompute;
    uint64_t rings;  // forward-equivalent passes of keys and values per layer and micro-batch
    uint64_t tp_per_microbatch;
    double layer_passes;
    double core_passes;
  };
  for (const Case& k :
       {Case{work::Recompute::kNone, 3, 18, 3, 3}, Case{work::Recompute::kSelective, 4, 18, 3, 4},
        Case{work::Recompute::kFull, 4, 26, 4, 4}}) {
    SCOPED_TRACE(static_cast<int>(k.recompute));
    TransformerConfig c = SmallModel(2, 1, 2, static_cast<int>(m));
    c.parallel.context = 2;
    c.recompute = k.recompute;
    const work::JobPrograms job = work::MakeTransformerJob(c);
    ASSERT_EQ(job.world_size(), 8);
    const JobOutcome out = RunOnJumboStar(job);
    ASSERT_TRUE(out.finished);
    EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes) << "bytes conserved";
    const auto pairs = PairBytes(out, job);
    EXPECT_EQ((pairs.at({Parallelism::kContext, 0, 2})), m * kLayers * k.rings * kv);
    EXPECT_EQ((pairs.at({Parallelism::kContext, 7, 5})), m * kLayers * k.rings * kv);
    EXPECT_EQ((pairs.at({Parallelism::kTensor, 0, 1})),
              m * (k.tp_per_microbatch * s + 3 * local * 4));
    uint64_t data_from_0 = 0;
    for (const auto& [key, bytes] : pairs) {
      const auto [parallelism, src, dst] = key;
      if (parallelism == Parallelism::kData && src == 0) data_from_0 += bytes;
      if (parallelism == Parallelism::kData) {
        EXPECT_EQ(src % 2, dst % 2) << "gradients stay with their tensor-parallel shard";
      }
      if (parallelism == Parallelism::kContext) {
        EXPECT_EQ(src % 2, dst % 2);
        EXPECT_EQ(src / 4, dst / 4) << "the ring stays inside its replica";
      }
    }
    EXPECT_EQ(data_from_0, gradients * 2 * 3 / 4);
    ExpectComputePerIteration(out, job, 0, c, m, static_cast<double>(local), kLayers,
                              k.layer_passes, k.core_passes);
  }
}

// The same job with each of Megatron-core's context-parallel communication types, per layer,
// micro-batch and direction between the two context ranks. all_gather: the forward gathers
// keys and values (a two-rank all-gather of 2 x 32 KiB sends 32 KiB each way), the backward
// gathers them again and reduce-scatters their gradients: 3 x 32 KiB, as the ring's. a2a
// (Ulysses): each all-to-all sends half its buffer, queries, keys and values of the rank's 2 of
// the 4 heads (64 tokens x (2 + 2 x 2) heads x 64 x 2 bytes = 48 KiB) and the attention's
// output (64 x 128 x 2 = 16 KiB), once each way in the forward and again in the backward.
TEST(TransformerJob, ContextParallelCommunicationTypesMoveTheirBytes) {
  const uint64_t m = 2;
  const uint64_t kv = 2 * 64 * 2 * 64 * 2;
  const uint64_t qkv = 64 * (2 + 2 * 2) * 64 * 2;
  const uint64_t out_bytes = 64 * (kHidden / 2) * 2;
  struct Case {
    work::ContextParallelComm comm;
    uint64_t per_layer;  // bytes rank 0 sends rank 2 per layer and micro-batch
  };
  for (const Case& k : {Case{work::ContextParallelComm::kP2p, 3 * kv},
                        Case{work::ContextParallelComm::kAllGather, 3 * kv},
                        Case{work::ContextParallelComm::kA2a, qkv / 2 * 2 + out_bytes / 2 * 2}}) {
    SCOPED_TRACE(static_cast<int>(k.comm));
    TransformerConfig c = SmallModel(2, 1, 2, static_cast<int>(m));
    c.parallel.context = 2;
    c.context_parallel_comm = k.comm;
    const work::JobPrograms job = work::MakeTransformerJob(c);
    const JobOutcome out = RunConserved(job);
    ASSERT_TRUE(out.finished);
    const auto pairs = PairBytes(out, job);
    EXPECT_EQ((pairs.at({Parallelism::kContext, 0, 2})), m * kLayers * k.per_layer);
    EXPECT_EQ((pairs.at({Parallelism::kContext, 2, 0})), m * kLayers * k.per_layer);
  }
}

// Hierarchical context parallelism (a2a+p2p), c = 4 in blocks of a = 2 on 4 ranks (t = d = 1:
// rank = context index), 2 micro-batches. Each rank holds 32 of the 128 tokens. Within a block
// ({0, 1}, {2, 3}) Ulysses' all-to-alls send half of each buffer to the other rank: queries,
// keys and values of all 4 heads (32 tokens x (4 + 2 x 4) x 64 x 2 bytes = 48 KiB) and the
// output (32 x 256 x 2 = 16 KiB), each way in the forward and again in the backward. Across the
// blocks the ring ({0, 2}, {1, 3}) has two steps and one exchange: keys and values of 64 tokens
// for the block's 2 heads (2 x 64 x 2 x 64 x 2 = 32 KiB) forward, twice that backward. Ranks 0
// and 3 exchange nothing.
TEST(TransformerJob, HierarchicalContextParallelismSplitsAllToAllsFromTheRing) {
  const uint64_t m = 2;
  TransformerConfig c = SmallModel(1, 1, 1, static_cast<int>(m));
  c.parallel.context = 4;
  c.context_parallel_comm = work::ContextParallelComm::kA2aP2p;
  c.context_a2a = 2;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  ASSERT_EQ(job.world_size(), 4);
  const JobOutcome out = RunConserved(job);
  ASSERT_TRUE(out.finished);
  const auto pairs = PairBytes(out, job);
  const uint64_t qkv = 32 * (4 + 2 * 4) * 64 * 2;
  const uint64_t out_bytes = 32 * kHidden * 2;
  const uint64_t kv = 2 * 64 * 2 * 64 * 2;
  for (const auto& [src, dst] : {std::pair{0u, 1u}, {1u, 0u}, {3u, 2u}}) {
    EXPECT_EQ((pairs.at({Parallelism::kContext, src, dst})),
              m * kLayers * (qkv / 2 + out_bytes / 2) * 2)
        << src << "->" << dst;
  }
  for (const auto& [src, dst] : {std::pair{0u, 2u}, {2u, 0u}, {1u, 3u}}) {
    EXPECT_EQ((pairs.at({Parallelism::kContext, src, dst})), m * kLayers * 3 * kv)
        << src << "->" << dst;
  }
  EXPECT_EQ(pairs.count({Parallelism::kContext, 0, 3}), 0u);
}

// Multi-head latent attention on the context ring (c = 2 on 2 ranks, 2 micro-batches): each
// head's key is 32 + 16 (rotary) wide and its value 64, so a rank's block is its 64 tokens x 4
// heads x (48 + 64) x 2 bytes, once forward and with the gradients (twice) backward.
TEST(TransformerJob, LatentAttentionPassesItsUpProjectedKeysAndValues) {
  const uint64_t m = 2;
  TransformerConfig c = SmallModel(1, 1, 1, static_cast<int>(m));
  c.parallel.context = 2;
  c.shape.kv_lora_rank = 64;
  c.shape.qk_head_dim = 32;
  c.shape.qk_rope_dim = 16;
  c.shape.v_head_dim = 64;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  const JobOutcome out = RunConserved(job);
  ASSERT_TRUE(out.finished);
  const uint64_t block = 64 * 4 * (48 + 64) * 2;
  EXPECT_EQ((PairBytes(out, job).at({Parallelism::kContext, 0, 1})), m * kLayers * 3 * block);
}

TEST(TransformerJob, ExpertAllToAllCarriesTheRoutedTokens) {
  // TwoRankMoe. Balanced routing sends half of each token's two copies to the other rank's two
  // experts: 128 tokens x 2 x 1/2 x h x 2 bytes per all-to-all, four all-to-alls per layer
  // (dispatch and combine, forward and backward).
  TransformerConfig c = TwoRankMoe();
  c.iterations = 2;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  const JobOutcome out = RunOnJumboStar(job, StarJob{}.rate_bps);
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes);
  const auto pairs = PairBytes(out, job);
  const uint64_t per_all_to_all = kSeq * 2 / 2 * kHidden * 2;
  EXPECT_EQ((pairs.at({Parallelism::kExpert, 0, 1})), 2 * kLayers * 4 * per_all_to_all);
  // Each rank holds two of the four experts: the other two never cross, and expert gradients
  // have no one to be reduced with (e = d); the dense rest is all-reduced over d = 2.
  for (const auto& group : job.communicators) {
    if (group.name.rfind("edp", 0) == 0) {
      EXPECT_EQ(group.ranks.size(), 1u);
    }
  }
}

// TwoRankMoe with context parallelism, c = 2 on 4 ranks (rank = cp + 2 dp). Expert groups are
// the data-parallel pair at one context index ({0, 2}, {1, 3}); each rank routes its 64 of the
// 128 tokens, so every all-to-all carries half of what it did without context parallelism. The
// ranks holding the same experts at both context indices ({0, 1}, {2, 3}) all-reduce their
// gradients: 2 of the 4 experts' MLPs (2 h f parameters each) per layer in 2 bytes, which a
// two-rank ring sends once in each direction. MoE layers' attention runs the context ring: keys
// and values (64 tokens x 4 heads x 64 x 2 bytes each) once forward, with their gradients back.
// A shared expert of width 512 beside the routed ones, on t = 2 with sequence parallelism (d =
// e = 2, 4 ranks, one micro-batch): a dense MLP on every token, split over the two tensor ranks.
// Per layer it adds a forward and a backward all-gather of its input and reduce-scatter of its
// output, each sending half of s h A = 128 x 256 x 2 bytes to the other tensor rank, and
// 2 x (2 x 256 x 512) / 2 FLOPs per token and pass (forward, and the backward's two).
TEST(TransformerJob, ASharedExpertComputesEveryTokenAndAddsItsTensorCollectives) {
  TransformerConfig c = SmallModel(2, 1, 2, 1);
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.parallel.expert = 2;
  c.sequence_parallel = true;
  const work::JobPrograms routed_only = work::MakeTransformerJob(c);
  const JobOutcome a = RunConserved(routed_only);
  c.shape.shared_expert_ffn = 512;
  const work::JobPrograms with_shared = work::MakeTransformerJob(c);
  const JobOutcome b = RunConserved(with_shared);
  ASSERT_TRUE(a.finished && b.finished);
  const uint64_t half_activation = kSeq * kHidden * 2 / 2;
  EXPECT_EQ((PairBytes(b, with_shared).at({Parallelism::kTensor, 0, 1})) -
                (PairBytes(a, routed_only).at({Parallelism::kTensor, 0, 1})),
            kLayers * 4 * half_activation);
  const double flops = kLayers * 3.0 * kSeq * (2.0 * (2 * kHidden * 512) / 2);
  EXPECT_NEAR(b.summary.iterations[0].compute_s - a.summary.iterations[0].compute_s,
              flops / (c.compute.peak_flops * c.compute.utilization), 2 * kLayers * 1e-9);
}

// TwoRankMoe with every other layer an MoE layer (moe_layer_freq = 2: layers 0 and 2) and the
// dense ones' MLP 512 wide, one iteration. Only the two MoE layers move tokens: 4 all-to-alls
// each of 128 tokens x 2 x 1/2 x 256 x 2 bytes. The dense gradients, all-reduced over d = 2 (a
// two-rank ring sends them once), are 2-byte: per layer attention 4 h^2 and norms 2 h; the
// routers' h E (MoE layers) or the MLPs' 2 h 512 (dense layers); the embedding V h and the
// output layer and final norm V h + h. The experts' have no one to be reduced with (e = d).
TEST(TransformerJob, EveryOtherLayerIsAnMoeLayer) {
  TransformerConfig c = TwoRankMoe();
  c.shape.moe_layer_freq = 2;
  c.shape.dense_ffn = 512;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  const JobOutcome out = RunConserved(job);
  ASSERT_TRUE(out.finished);
  const auto pairs = PairBytes(out, job);
  EXPECT_EQ((pairs.at({Parallelism::kExpert, 0, 1})), 2 * 4 * (kSeq * 2 / 2 * kHidden * 2));
  const uint64_t dense = 4 * (4 * kHidden * kHidden + 2 * kHidden) + 2 * (kHidden * 4) +
                         2 * (2 * kHidden * 512) + kVocab * kHidden + kVocab * kHidden + kHidden;
  EXPECT_EQ((pairs.at({Parallelism::kData, 0, 1})), 2 * dense);
}

// TwoRankMoe with a shared expert of width 512 on a 1 Gb/s star, where each all-to-all (64 KiB
// each way) outlasts the shared expert's projections (2 x 2 x 256 x 512 FLOPs per token in
// all, 1.3 us a forward at 50 TFLOP/s). With shared_expert_overlap they run while the
// all-to-alls do, so the iteration is shorter by the whole shared expert's compute: 4 layers x
// (1 forward + 2 backward) passes of 128 tokens; the compute itself is the same.
TEST(TransformerJob, TheSharedExpertHidesBehindTheAllToAlls) {
  TransformerConfig c = TwoRankMoe();
  c.shape.shared_expert_ffn = 512;
  const work::JobPrograms after_combine = work::MakeTransformerJob(c);
  const JobOutcome a = RunOnJumboStar(after_combine, 1e9);
  c.shared_expert_overlap = true;
  const work::JobPrograms overlapped = work::MakeTransformerJob(c);
  const JobOutcome b = RunOnJumboStar(overlapped, 1e9);
  ASSERT_TRUE(a.finished && b.finished);
  const double shared = kLayers * 3.0 * kSeq * (2.0 * 2 * kHidden * 512) /
                        (c.compute.peak_flops * c.compute.utilization);
  EXPECT_NEAR(a.summary.iterations[0].compute_s, b.summary.iterations[0].compute_s,
              4 * kLayers * 1e-9);
  EXPECT_NEAR((a.summary.iterations[0].time_s - b.summary.iterations[0].time_s) / shared, 1.0,
              0.01);
}

TEST(TransformerJob, ExpertsWithContextParallelismRouteTheLocalTokens) {
  TransformerConfig c = TwoRankMoe();
  c.parallel.context = 2;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  ASSERT_EQ(job.world_size(), 4);
  const JobOutcome out = RunConserved(job);
  ASSERT_TRUE(out.finished);
  const auto pairs = PairBytes(out, job);
  const uint64_t per_all_to_all = kSeq / 2 * 2 / 2 * kHidden * 2;
  EXPECT_EQ((pairs.at({Parallelism::kExpert, 0, 2})), kLayers * 4 * per_all_to_all);
  EXPECT_EQ((pairs.at({Parallelism::kExpert, 3, 1})), kLayers * 4 * per_all_to_all);
  EXPECT_EQ(pairs.count({Parallelism::kExpert, 0, 1}), 0u) << "experts stay at a context index";
  uint64_t expert_gradients = 0;
  for (const auto& [key, bytes] : out.traffic) {
    const auto [src, dst, comm, channel] = key;
    if (job.communicators[comm].name.rfind("edp", 0) == 0) {
      EXPECT_EQ(src / 2, dst / 2) << "the same experts: the same data-parallel rank";
      if (src == 0) expert_gradients += bytes;
    }
  }
  EXPECT_EQ(expert_gradients, kLayers * 2 * (2 * kHidden * kFfn) * 2);
  const uint64_t kv = 2 * (kSeq / 2) * 4 * (kHidden / 4) * 2;
  EXPECT_EQ((pairs.at({Parallelism::kContext, 0, 1})), kLayers * 3 * kv);
}

// The job of ExpertAllToAllCarriesTheRoutedTokens with an expert capacity: each expert takes
// 64 of a rank's 256 assignments; C = 0.5 caps that at ceil(0.5 x 128 x 2 / 4) = 32, halving
// every all-to-all and the experts' compute; padded to C = 1.5 (96), they grow by half.
TEST(TransformerJob, ExpertCapacityDropsAndPadsTheAllToAlls) {
  const uint64_t full = kSeq * 2 / 2 * kHidden * 2;  // bytes to the other rank, uncapped
  struct Case {
    double factor;
    bool pad;
    uint64_t per_all_to_all;
  };
  double expert_compute[3] = {};
  int i = 0;
  for (const Case& k :
       {Case{0, false, full}, Case{0.5, false, full / 2}, Case{1.5, true, full * 3 / 2}}) {
    SCOPED_TRACE(k.factor);
    TransformerConfig c = TwoRankMoe();
    c.expert_capacity_factor = k.factor;
    c.pad_to_capacity = k.pad;
    const work::JobPrograms job = work::MakeTransformerJob(c);
    const JobOutcome out = RunOnJumboStar(job, StarJob{}.rate_bps);
    ASSERT_TRUE(out.finished);
    EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes);
    EXPECT_EQ((PairBytes(out, job).at({Parallelism::kExpert, 0, 1})),
              kLayers * 4 * k.per_all_to_all);
    for (const work::Op& op : job.programs[0]->ops) {
      if (op.kind == work::OpKind::kCompute && op.label.find("experts") != std::string::npos) {
        expert_compute[i] += op.duration_s;
      }
    }
    ++i;
  }
  EXPECT_NEAR(expert_compute[1] / expert_compute[0], 0.5, 1e-12);
  EXPECT_NEAR(expert_compute[2] / expert_compute[0], 1.5, 1e-12);
}

TEST(TransformerJob, SkewedRoutingMovesDifferentBytesEveryIteration) {
  TransformerConfig c = SmallModel(1, 1, 4, 1);
  c.shape.experts = 8;
  c.shape.top_k = 2;
  c.parallel.expert = 4;
  c.iterations = 2;
  c.routing_skew = 1.5;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  StarJob setup;
  setup.world = 4;
  setup.network.mtu = 9000;
  const JobOutcome out = RunOnStar(setup, job);
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes);
  // The dispatch of layer 0 moves a different pattern in each iteration (rank 0's program
  // holds both), and the simulated all-to-all takes a different time.
  std::map<int, work::AllToAllCounts> pattern;
  for (const auto& op : job.programs[0]->ops) {
    if (op.label == "F0 L0 dispatch") pattern[op.iteration] = op.counts;
  }
  ASSERT_EQ(pattern.size(), 2u);
  EXPECT_NE(*pattern[0], *pattern[1]);
  std::map<int, double> took;
  for (const auto& c : out.summary.collectives) {
    if (c.label == "F0 L0 dispatch") took[c.iteration] = c.time_s;
  }
  EXPECT_NE(took[0], took[1]);
  // Imbalance shows: ranks whose experts are hot compute longer, so the others wait.
  const auto& b = out.summary.iterations[1].breakdown;
  EXPECT_GT(b.exposed_s[static_cast<size_t>(Parallelism::kExpert)], 0.0);
}

TEST(TransformerJob, SequenceParallelismHalvesPipelineMessagesNotTensorTraffic) {
  // Korthikanti et al. 2022: every tensor-parallel all-reduce becomes an all-gather and a
  // reduce-scatter of the same buffer (each sends S (t-1)/t: on 2 ranks S/2 + S/2 = the
  // all-reduce's S), and stages exchange their sequence shard, S / t.
  TransformerConfig c = SmallModel(2, 2, 2, 4);
  c.sequence_parallel = true;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  StarJob setup;
  setup.world = 8;
  setup.network.mtu = 9000;
  const JobOutcome out = RunOnStar(setup, job);
  ASSERT_TRUE(out.finished);
  const auto pairs = PairBytes(out, job);
  const uint64_t m = 4;
  const uint64_t s = kSeq * kHidden * 2;
  EXPECT_EQ((pairs.at({Parallelism::kTensor, 0, 1})), m * 9 * s);
  EXPECT_EQ((pairs.at({Parallelism::kPipeline, 2, 6})), m * s / 2);
}

// Megatron's distributed optimizer with overlap_param_gather (zero1, d = 2, one stage, one
// micro-batch, 3 iterations, a bucket per layer: each layer's 786,944 parameters take 1.57 MB
// of 2-byte gradients, over the 1 MB cap). Without it every iteration ends with the four
// buckets' all-gathers; with it iteration 0 starts from whole parameters and each later one
// gathers the last step's during its forward: layer 0's bucket (with the embedding) as the
// forward begins, each next one while the layer before it computes (545 us of forward per
// layer at 0.4 TFLOP/s against some 65 us per gather). So the steady iteration is shorter by
// the three later buckets' all-gathers, which alpha-beta gives on the star, and one
// iteration's all-gathers fewer cross the network: n / 2 two-byte parameters to the peer,
// n = 4 x 786,944 + 500 x 256 (embedding) + 500 x 256 + 256 (output layer and final norm).
TEST(TransformerJob, OverlappedParameterGathersHideBehindTheNextForward) {
  TransformerConfig c = SmallModel(1, 1, 2, 1);
  c.data_parallel_mode = work::DataParallelMode::kZero1;
  c.iterations = 3;
  c.bucket_bytes = 1'000'000;
  c.compute.peak_flops = 1e12;
  const uint64_t layer = 4 * kHidden * kHidden + 2 * kHidden * kFfn + 2 * kHidden;
  const uint64_t n = 4 * layer + kVocab * kHidden + kVocab * kHidden + kHidden;
  StarJob setup;
  setup.world = 2;
  setup.network.mtu = 9000;
  const work::JobPrograms after_step = work::MakeTransformerJob(c);
  const JobOutcome a = RunOnStar(setup, after_step);
  c.overlap_param_gather = true;
  const work::JobPrograms overlapped = work::MakeTransformerJob(c);
  const JobOutcome b = RunOnStar(setup, overlapped);
  ASSERT_TRUE(a.finished && b.finished);
  // Reduce-scatters send n / 2 two-byte gradients per iteration, all-gathers n / 2 parameters.
  EXPECT_EQ((PairBytes(a, after_step).at({Parallelism::kData, 0, 1})), 3 * n + 3 * n);
  EXPECT_EQ((PairBytes(b, overlapped).at({Parallelism::kData, 0, 1})), 3 * n + 2 * n);
  // A 2-rank all-gather of S bytes: one step of S / 2.
  auto gather = [&](double params) {
    return AlphaBetaSeconds(2, 2 * params, setup.rate_bps, setup.latency_s, setup.network.mtu) / 2;
  };
  const double hidden = gather(layer) + gather(layer) + gather(layer + kVocab * kHidden + kHidden);
  const double saved = a.summary.iterations[2].time_s - b.summary.iterations[2].time_s;
  std::printf(
      "steady iteration %.6f s after the step, %.6f s overlapped: %.1f us saved, the three "
      "later gathers %.1f us by alpha-beta\n",
      a.summary.iterations[2].time_s, b.summary.iterations[2].time_s, saved * 1e6, hidden * 1e6);
  EXPECT_NEAR(saved / hidden, 1.0, 0.05);
  // The compute is the same; what is left exposed of the gathers is the first bucket's.
  EXPECT_NEAR(b.summary.iterations[2].compute_s, a.summary.iterations[2].compute_s, 1e-9);
}

// DDP's gradient all-reduces on two ranks, four buckets (1 MB cap of 2-byte gradients: a
// layer each, the top one with the output layer and final norm, the lowest with the
// embedding). Overlapped (the default, as PyTorch's DDP), each bucket is reduced while the
// layers below it compute their backward (some 1.4 ms each at 0.4 TFLOP/s against about 130
// us per all-reduce), so only the last, lowest bucket's is exposed; with overlap_grad_reduce
// off (Megatron-LM's local DDP of 2021 reduced after the whole backward) all four follow the
// compute one after another. Each all-reduce by alpha-beta on the star.
TEST(TransformerJob, DdpReducesAfterTheBackwardWhenNotOverlapped) {
  TransformerConfig c = SmallModel(1, 1, 2, 1);
  c.bucket_bytes = 1'000'000;
  c.compute.peak_flops = 1e12;
  const uint64_t layer = 4 * kHidden * kHidden + 2 * kHidden * kFfn + 2 * kHidden;
  StarJob setup;
  setup.world = 2;
  setup.network.mtu = 9000;
  auto all_reduce = [&](double params) {
    return AlphaBetaSeconds(2, params * c.gradient_bytes, setup.rate_bps, setup.latency_s,
                            setup.network.mtu);
  };
  const double lowest = all_reduce(layer + kVocab * kHidden);
  const double others =
      all_reduce(layer + kVocab * kHidden + kHidden) + all_reduce(layer) + all_reduce(layer);

  const JobOutcome overlapped = RunOnStar(setup, work::MakeTransformerJob(c));
  c.overlap_grad_reduce = false;
  const JobOutcome after = RunOnStar(setup, work::MakeTransformerJob(c));
  ASSERT_TRUE(overlapped.finished && after.finished);
  const double compute = after.summary.iterations[0].compute_s;
  EXPECT_NEAR(overlapped.summary.iterations[0].compute_s, compute, 1e-9);
  std::printf(
      "overlapped %.6f s, after the backward %.6f s; compute %.6f s, buckets %.1f us "
      "(lowest) + %.1f us\n",
      overlapped.summary.iterations[0].time_s, after.summary.iterations[0].time_s, compute,
      lowest * 1e6, others * 1e6);
  EXPECT_NEAR(after.summary.iterations[0].time_s / (compute + lowest + others), 1.0, 0.02);
  EXPECT_NEAR(overlapped.summary.iterations[0].time_s / (compute + lowest), 1.0, 0.02);
}

// Tensor-parallel communication overlap on t = 2 with sequence parallelism, one micro-batch:
// each layer's forward and backward wait for two all-gathers and two reduce-scatters of the
// 64 KiB activations (b s h, 2 bytes), each a 2-rank step of half of them, alpha-beta's
// all-reduce time of 64 KiB over two. Overlapped, every one of them runs beside half a GEMM
// (at 0.4 TFLOP/s the smallest, the output projection's forward, is 21 us; each collective
// some 4 us), so the iteration is shorter by all 4 layers x 8 of them, and the compute is the
// same.
TEST(TransformerJob, TensorParallelOverlapHidesEachLayersGathersAndReductions) {
  TransformerConfig c = SmallModel(2, 1, 1, 1);
  c.sequence_parallel = true;
  c.compute.peak_flops = 1e12;
  StarJob setup;
  setup.world = 2;
  setup.network.mtu = 9000;
  const JobOutcome waited = RunOnStar(setup, work::MakeTransformerJob(c));
  c.tp_comm_overlap = true;
  const JobOutcome overlapped = RunOnStar(setup, work::MakeTransformerJob(c));
  ASSERT_TRUE(waited.finished && overlapped.finished);
  const double activation = kSeq * kHidden * 2.0;
  const double step =
      AlphaBetaSeconds(2, activation, setup.rate_bps, setup.latency_s, setup.network.mtu) / 2;
  const double hidden = kLayers * 8 * step;
  const double saved =
      waited.summary.iterations[0].time_s - overlapped.summary.iterations[0].time_s;
  std::printf("waited %.6f s, overlapped %.6f s: %.1f us saved, 32 collectives %.1f us\n",
              waited.summary.iterations[0].time_s, overlapped.summary.iterations[0].time_s,
              saved * 1e6, hidden * 1e6);
  EXPECT_NEAR(saved / hidden, 1.0, 0.1);
  // The same compute, cut into more ops (each lasts whole nanoseconds in the simulator).
  EXPECT_NEAR(overlapped.summary.iterations[0].compute_s, waited.summary.iterations[0].compute_s,
              1e-7);
}

struct DpModeCase {
  work::DataParallelMode mode;
  const char* name;
  // Bytes a rank sends its data-parallel peer per iteration (d = 2), for N parameters per rank,
  // 4-byte gradients and 2-byte parameters, m micro-batches.
  uint64_t (*bytes)(uint64_t n, uint64_t m);
};

void PrintTo(const DpModeCase& c, std::ostream* os) {
  *os << c.name;
}

class DataParallelModes : public ::testing::TestWithParam<DpModeCase> {};

TEST_P(DataParallelModes, DataParallelTrafficPerMode) {
  TransformerConfig c = SmallModel(2, 2, 2, 2);
  c.data_parallel_mode = GetParam().mode;
  c.gradient_bytes = 4;
  c.parameter_bytes = 2;
  const work::JobPrograms job = work::MakeTransformerJob(c);
  StarJob setup;
  setup.world = 8;
  setup.network.mtu = 9000;
  const JobOutcome out = RunOnStar(setup, job);
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, out.schedule_bytes);
  // Stage 0's parameters per rank: two layers' matrices and the embedding split over t = 2,
  // their four norms whole.
  const uint64_t matrices = 4 * kHidden * kHidden + 2 * kHidden * kFfn;
  const uint64_t n = (2 * matrices + kVocab * kHidden) / 2 + 4 * kHidden;
  EXPECT_EQ((PairBytes(out, job).at({Parallelism::kData, 1, 3})), GetParam().bytes(n, 2));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DataParallelModes,
    ::testing::Values(
        // A 2-rank all-reduce of the gradients sends them once.
        DpModeCase{work::DataParallelMode::kDdp, "ddp", [](uint64_t n, uint64_t) { return 4 * n; }},
        // Reduce-scatter sends half the gradients, all-gather half the parameters.
        DpModeCase{work::DataParallelMode::kZero1, "zero1",
                   [](uint64_t n, uint64_t) { return 4 * n / 2 + 2 * n / 2; }},
        DpModeCase{work::DataParallelMode::kZero2, "zero2",
                   [](uint64_t n, uint64_t) { return 4 * n / 2 + 2 * n / 2; }},
        // Every micro-batch: parameters gathered for forward and again for backward, gradients
        // reduce-scattered.
        DpModeCase{work::DataParallelMode::kFsdp, "fsdp",
                   [](uint64_t n, uint64_t m) { return m * (2 * n / 2 + 2 * n / 2 + 4 * n / 2); }}),
    [](const ::testing::TestParamInfo<DpModeCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nbox::testing
