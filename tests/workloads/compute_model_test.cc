// The per-operation compute model (workloads/compute_model.h) against hand-worked cases, the
// GPU presets against their sources, and the transformer's kernels against its FLOP counts.
#include "workloads/compute_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "tests/workloads/small_transformer.h"
#include "workloads/gpu_preset.h"
#include "workloads/program.h"
#include "workloads/transformer.h"
#include "workloads/transformer_kernels.h"
#include "workloads/transformer_shape.h"

namespace nbox::work {
namespace {

ComputeModel OnGpu(const char* name, Precision precision = Precision::kBf16,
                   AttentionKernel attention = AttentionKernel::kAuto) {
  ComputeModel model;
  model.mode = ComputeModel::Mode::kModel;
  model.gpu = FindGpuPreset(name);
  model.precision = precision;
  model.attention_kernel = attention;
  return model;
}

// H100, 8192^3 in BF16. Tiles of 128 x 256: 64 x 32 = 2048; k-slices of 64: 128 each, 262,144
// units over 132 SMs in 1,986 rounds (262,152 slots): efficiency 0.99997. 1.09951e12 FLOPs at
// 794.5 TFLOP/s = 1.383904 ms, / 0.99997 = 1.383946 ms; its 402.7 MB at 3.35 TB/s take
// 0.120 ms, so compute bounds it; 4 us of kernel cost besides.
TEST(ComputeModel, ALargeSquareGemmRunsAtTheAchievableRate) {
  const ComputeCost cost = OnGpu("h100").Gemms({{8192, 8192, 8192}});
  EXPECT_NEAR(cost.gemm_s, 1.383946e-3, 1e-9);
  EXPECT_DOUBLE_EQ(cost.launch_s, 4e-6);
  EXPECT_EQ(cost.attention_s + cost.memory_s + cost.optimizer_s, 0);
}

// A skinny GEMM (8 tokens through an 8192 x 8192 weight) is memory-bound: the weight's 134 MB
// (plus 0.26 MB of activations) at 3.35 TB/s = 40.1 us, where its FLOPs would take 1.4 us.
TEST(ComputeModel, ASkinnyGemmIsBoundByMemory) {
  const double bytes = (8.0 * 8192 + 8192.0 * 8192) * 2 + 8.0 * 8192 * 2;
  const ComputeCost cost = OnGpu("h100").Gemms({{8, 8192, 8192}});
  EXPECT_NEAR(cost.gemm_s, bytes / 3.35e12, 1e-12);
  EXPECT_NEAR(cost.gemm_s, 40.1e-6, 0.1e-6);
}

// A GEMM too small to fill the SMs loses the idle part of its last round: on an A100 (108 SMs)
// 512 x 256 x 64 is 4 tiles of one k-slice, 4 units in one round of 108: 2 x 512 x 256 x 64 =
// 16.8 MFLOPs at 271.2 TFLOP/s x 4 / 108 = 1.670 us.
TEST(ComputeModel, AGemmSmallerThanTheGpuKeepsOnlySomeSMsBusy) {
  const ComputeCost cost = OnGpu("a100").Gemms({{512, 256, 64}});
  EXPECT_NEAR(cost.gemm_s, 2.0 * 512 * 256 * 64 / (271.2e12 * 4 / 108), 1e-12);
}

// Layers of h = 1024 (8 heads, a GeLU MLP of 4096) over one 2048-token sequence on an H100,
// t-way tensor parallel.
TransformerConfig MidSizedLayers(int t, Precision precision) {
  TransformerConfig c = testing::SmallTransformer(t, 1, 1, 1, PipelineSchedule::kOneFOneB);
  c.shape.hidden = 1024;
  c.shape.heads = 8;
  c.shape.ffn = 4096;
  c.shape.seq_len = 2048;
  c.compute = OnGpu("h100", precision);
  return c;
}

// FP8 halves the inputs' bytes and uses the FP8 rate: H100 at 1402.6 TFLOP/s. Its input is
// cast first: 8192^2 elements read in bf16 and written twice in FP8, 4 bytes each, 268 MB at
// 3.35 TB/s = 80.1 us, one more kernel; a weight gradient's input was cast in the forward.
TEST(ComputeModel, Fp8UsesItsOwnRateAndCastsItsInput) {
  const ComputeModel fp8 = OnGpu("h100", Precision::kFp8);
  const ComputeCost cost = fp8.Gemms({{8192, 8192, 8192}});
  EXPECT_NEAR(cost.gemm_s, 1.0995116e12 / (1402.6e12 * 262144.0 / 262152.0), 1e-8);
  EXPECT_NEAR(cost.memory_s, 4.0 * 8192 * 8192 / 3.35e12, 1e-12);
  EXPECT_DOUBLE_EQ(cost.launch_s, 8e-6);
  Gemm wgrad{8192, 8192, 8192};
  wgrad.casts_input = false;
  EXPECT_EQ(fp8.Gemms({wgrad}).memory_s, 0);
}

// Flash attention at a measured length: H100, causal, head dim 128, 4096 tokens, 32 heads:
// 4 x 32 x 4096^2 x 128 / 2 = 137.44 GFLOPs. FlashAttention-2 (forward and backward measured
// together at 294 TFLOP/s): 0.46748 ms forward, 2.5 times that backward.
TEST(ComputeModel, FlashAttentionAtAMeasuredLength) {
  AttentionCall call;
  call.heads = 32;
  call.head_dim = 128;
  call.queries = call.keys = 4096;
  const ComputeModel model = OnGpu("h100", Precision::kBf16, AttentionKernel::kFlash2);
  EXPECT_NEAR(model.Attention(call, false).attention_s, 137.438953472e9 / 294e12, 1e-12);
  EXPECT_NEAR(model.Attention(call, true).attention_s, 2.5 * 137.438953472e9 / 294e12, 1e-12);
  EXPECT_NEAR(model.Attention(call, false).attention_s, 0.46748e-3, 1e-8);
}

// The same call on cuDNN's kernel, which Transformer Engine picks on Hopper (auto): forward at
// its causal 518 TFLOP/s, 0.26533 ms; backward (343.6 GFLOPs) at the unmasked backward's 499
// scaled by the mask's forward cost 518 / 609, 424.44 TFLOP/s: 0.80954 ms.
TEST(ComputeModel, CudnnAttentionIsHoppersAndTimesEachPassAtItsOwnRate) {
  AttentionCall call;
  call.heads = 32;
  call.head_dim = 128;
  call.queries = call.keys = 4096;
  const ComputeModel model = OnGpu("h100");
  EXPECT_NEAR(model.Attention(call, false).attention_s, 0.26533e-3, 1e-8);
  EXPECT_NEAR(model.Attention(call, true).attention_s, 0.80954e-3, 1e-8);
  EXPECT_DOUBLE_EQ(
      OnGpu("h100", Precision::kBf16, AttentionKernel::kCudnn).Attention(call, true).attention_s,
      model.Attention(call, true).attention_s);
  // The A100 has FlashAttention-2 only, which auto takes there.
  EXPECT_DOUBLE_EQ(
      OnGpu("a100").Attention(call, false).attention_s,
      OnGpu("a100", Precision::kBf16, AttentionKernel::kFlash2).Attention(call, false).attention_s);
}

// A kernel the preset has no measurement of is refused by name.
TEST(ComputeModel, AnUnmeasuredAttentionKernelIsRefused) {
  try {
    ValidateComputeModel(OnGpu("a100", Precision::kBf16, AttentionKernel::kCudnn), "workload");
    FAIL() << "cudnn on an a100 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cudnn was not measured on the a100 (measured: flash2)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(
      ValidateComputeModel(OnGpu("h100", Precision::kBf16, AttentionKernel::kFlash2), "workload"));
}

// Between measured lengths the rate is log-linear: 3000 tokens lie ln(3000/2048)/ln 2 = 0.5508
// of the way from 2048 (265) to 4096 (294): 280.97 TFLOP/s. Head dim 96 takes the nearer 128's.
TEST(ComputeModel, FlashAttentionBetweenMeasuredLengths) {
  AttentionCall call;
  call.heads = 8;
  call.head_dim = 96;
  call.queries = call.keys = 3000;
  const double rate = 265e12 + std::log(3000.0 / 2048) / std::log(2.0) * 29e12;
  EXPECT_NEAR(
      OnGpu("h100", Precision::kBf16, AttentionKernel::kFlash2).Attention(call, false).attention_s,
      call.ForwardFlops() / rate, 1e-15);
  EXPECT_NEAR(rate, 280.97e12, 0.01e12);
}

// Unfused attention (flash off): two batched GEMMs per head and the softmax and dropout passes
// over every score, 9 bytes each forward: on an A100 with 2 x 16 heads of 64 over 2048 tokens,
// 2 x 16 x 2048^2 x 9 = 1.208 GB at 2.039 TB/s = 0.5925 ms of memory-bound time.
// Flash attention on a GPU without a measured attention rate (B200), in FP8 training: at the
// achievable BF16 matmul rate (attention stays in BF16), not the FP8 one. Causal, head dim 128,
// 8192 tokens, 32 heads: 4 x 32 x 8192^2 x 128 / 2 = 549.76 GFLOPs at 1745 TFLOP/s = 0.31505 ms.
TEST(ComputeModel, UnmeasuredFlashAttentionRunsAtTheBf16RateInFp8Training) {
  AttentionCall call;
  call.heads = 32;
  call.head_dim = 128;
  call.queries = 8192;
  call.keys = 8192;
  call.causal = true;
  const double flops = 4.0 * 32 * 8192 * 8192 * 128 / 2;
  EXPECT_NEAR(OnGpu("b200", Precision::kFp8).Attention(call, false).attention_s, flops / 1745.0e12,
              1e-12);
  EXPECT_NEAR(OnGpu("b200", Precision::kFp8).Attention(call, false).attention_s, 0.31505e-3, 1e-8);
}

TEST(ComputeModel, UnfusedAttentionMovesItsScores) {
  AttentionCall call;
  call.batch = 2;
  call.heads = 16;
  call.head_dim = 64;
  call.queries = call.keys = 2048;
  call.flash = false;
  const ComputeCost cost = OnGpu("a100").Attention(call, false);
  EXPECT_NEAR(cost.memory_s, 2.0 * 16 * 2048 * 2048 * 9 / 2.039e12, 1e-12);
  EXPECT_GT(cost.attention_s, 0);
}

// By utilisation, today's formulas: FLOPs over peak x utilisation, attention over the full
// square at its own utilisation, memory-bound work free without a bandwidth.
TEST(ComputeModel, ByUtilisationEveryShapeRunsAtOneRate) {
  ComputeModel model;
  model.peak_flops = 100e12;
  model.utilization = 0.5;
  model.attention_utilization = 0.25;
  EXPECT_DOUBLE_EQ(model.Gemms({{1000, 1000, 1000}}).gemm_s, 2e9 / 50e12);
  AttentionCall call;
  call.heads = 2;
  call.head_dim = 64;
  call.queries = call.keys = 1024;
  EXPECT_DOUBLE_EQ(model.Attention(call, false).attention_s, 4.0 * 2 * 1024 * 1024 * 64 / 25e12);
  EXPECT_EQ(model.MemoryBound(1e9, 3).total(), 0);
}

// The presets are their sources' figures (workloads/README.md, "GPU presets").
TEST(GpuPresets, FiguresAreTheirSources) {
  const GpuPreset* a100 = FindGpuPreset("a100");
  const GpuPreset* h100 = FindGpuPreset("h100");
  const GpuPreset* h200 = FindGpuPreset("h200");
  const GpuPreset* b200 = FindGpuPreset("b200");
  ASSERT_TRUE(a100 && h100 && h200 && b200);
  // Datasheets: dense tensor-core peaks and HBM bandwidth.
  EXPECT_DOUBLE_EQ(a100->peak_bf16_flops, 312e12);
  EXPECT_DOUBLE_EQ(h100->peak_bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h100->peak_fp8_flops, 1979e12);
  EXPECT_DOUBLE_EQ(b200->peak_bf16_flops, 2250e12);
  EXPECT_DOUBLE_EQ(a100->memory_bytes_per_s, 2.039e12);
  EXPECT_DOUBLE_EQ(h100->memory_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h200->memory_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(b200->memory_bytes_per_s, 8.0e12);
  // ml-engineering's Maximum Achievable Matmul FLOPS table.
  EXPECT_DOUBLE_EQ(a100->achievable_bf16_flops, 271.2e12);
  EXPECT_DOUBLE_EQ(h100->achievable_bf16_flops, 794.5e12);
  EXPECT_DOUBLE_EQ(h100->achievable_fp8_flops, 1402.6e12);
  EXPECT_DOUBLE_EQ(h200->achievable_fp8_flops, 1453.4e12);
  EXPECT_DOUBLE_EQ(b200->achievable_bf16_flops, 1745.0e12);
  EXPECT_EQ(a100->achievable_fp8_flops, 0);  // no FP8 tensor cores
  // FlashAttention-2's benchmark figures (forward and backward together): A100 causal head
  // dim 128 at 2k, H100 at 16k.
  const AttentionRates& a100_flash2 = a100->AttentionOf(AttentionKernel::kFlash2)->by_head_dim[1];
  EXPECT_DOUBLE_EQ(a100_flash2.causal_forward[2], 155e12);
  EXPECT_DOUBLE_EQ(a100_flash2.causal_backward[2], 155e12);
  EXPECT_DOUBLE_EQ(h100->AttentionOf(AttentionKernel::kFlash2)->by_head_dim[1].causal_forward[5],
                   328e12);
  // cuDNN's in the FlashAttention-3 paper (Figures 5 and 6): head dim 128, causal forward at 8k,
  // unmasked backward at 16k; head dim 64, causal forward at 512.
  const AttentionKernelRates* cudnn = h100->AttentionOf(AttentionKernel::kCudnn);
  ASSERT_NE(cudnn, nullptr);
  EXPECT_DOUBLE_EQ(cudnn->by_head_dim[1].causal_forward[4], 529e12);
  EXPECT_DOUBLE_EQ(cudnn->by_head_dim[1].full_backward[5], 516e12);
  EXPECT_DOUBLE_EQ(cudnn->by_head_dim[0].causal_forward[0], 225e12);
  // Transformer Engine's choice: cuDNN on Hopper, FlashAttention-2 on the A100, none measured
  // on the B200.
  EXPECT_EQ(h100->AttentionOf(AttentionKernel::kAuto)->kernel, AttentionKernel::kCudnn);
  EXPECT_EQ(h200->AttentionOf(AttentionKernel::kAuto)->kernel, AttentionKernel::kCudnn);
  EXPECT_EQ(a100->AttentionOf(AttentionKernel::kAuto)->kernel, AttentionKernel::kFlash2);
  EXPECT_EQ(b200->AttentionOf(AttentionKernel::kAuto), nullptr);
  EXPECT_EQ(FindGpuPreset("v100"), nullptr);
}

// The kernels of a layer add up to its FLOPs: Llama 3 70B (GQA 8 of 64 heads, SwiGLU) on one
// of 4 tensor ranks, 4096 tokens; MLA's add up too (DeepSeek-V3, without its norms).
TEST(TransformerKernels, GemmsAddUpToTheLayersFlops) {
  auto sum = [](const std::vector<Gemm>& gemms) {
    double flops = 0;
    for (const Gemm& g : gemms) flops += g.flops();
    return flops;
  };
  const TransformerShape llama = *FindTransformerPreset("llama3-70b");
  EXPECT_DOUBLE_EQ(sum(AttentionLinearGemms(llama, 4096, 4)),
                   4096 * llama.AttentionLinearFlopsPerToken() / 4);
  EXPECT_DOUBLE_EQ(sum(MlpGemms(llama, 4096, 4, llama.ffn)), 4096 * llama.MlpFlopsPerToken() / 4);
  EXPECT_DOUBLE_EQ(LogitsGemm(llama, 4096, 4).flops(), 4096 * llama.LogitsFlopsPerToken() / 4);
  EXPECT_DOUBLE_EQ(sum(BackwardGemms(MlpGemms(llama, 4096, 4, llama.ffn))),
                   2 * sum(MlpGemms(llama, 4096, 4, llama.ffn)));
  const TransformerShape deepseek = *FindTransformerPreset("deepseek-v3");
  const double norms = 2.0 * (deepseek.q_lora_rank + deepseek.kv_lora_rank);
  EXPECT_NEAR(sum(AttentionLinearGemms(deepseek, 4096, 1)),
              4096 * (deepseek.AttentionLinearFlopsPerToken() - norms), 1);
}

// GPT-3 1.3B's 24 heads of 128 on a hidden size of 2048 (Brown et al. Table 2.1): attention
// is 3072 wide, so its projections hold 4 x 2048 x 3072 parameters, and their biases 3 x 3072
// (QKV) and 2048 (the output).
TEST(TransformerKernels, HeadsWiderThanTheHiddenSize) {
  const TransformerShape gpt = *FindTransformerPreset("gpt3-1.3b");
  EXPECT_EQ(gpt.HeadDim(), 128);
  EXPECT_EQ(gpt.AttentionParameters(), 4u * 2048 * 3072 + 3 * 3072 + 2048);
  EXPECT_NO_THROW(ValidateTransformerShape(gpt));
}

}  // namespace
}  // namespace nbox::work

namespace nbox::work {
namespace {

// The largest t this preset takes (Megatron's rules, ValidateTransformerConfig), and 1.
int LargestTensorParallel(TransformerConfig c) {
  for (int t = c.shape.heads; t > 1; --t) {
    c.parallel.tensor = t;
    try {
      ValidateTransformerConfig(c);
      return t;
    } catch (const std::invalid_argument&) {
    }
  }
  return 1;
}

// Every preset runs per operation at t = 1 and at its largest legal t: one rank's program has
// compute, its kinds add up to its durations, and a wider t gives each rank less to compute.
// The output layer of an FP8 job runs in BF16 (Megatron's own linear layer, not Transformer
// Engine's), and the cross entropy moves every logit in fp32. One layer of h = 1024, a
// vocabulary of 32,768, 2048 tokens on an H100, t = 1. Logits: 2048 x 32768 x 1024, 16 x 128
// tiles of 16 k-slices = 32,768 units in 249 rounds of 132 (32,868 slots); 137.44 GFLOPs at
// 794.5 TFLOP/s (BF16, not FP8's 1402.6) / (32768 / 32868) = 173.51 us, compute-bound (its
// 205.5 MB take 61 us). Cross entropy: 2048 x 32768 logits x 38 bytes = 2.55 GB at 3.35 TB/s =
// 761.4 us in 6 kernels. Backward: the two gradient GEMMs (2048 x 1024 x 32768 and 1024 x
// 32768 x 2048, each 32,768 units: the same 173.51 us) and 14 bytes a logit, 280.5 us in 2.
// Megatron's fused kernels: 22 bytes a logit in 3 kernels forward, 6 in 1 backward; Transformer
// Engine's: 6 in 2 forward, 4 in 1 backward.
TEST(ComputeModel, TheOutputLayerRunsInBf16AndTheCrossEntropyMovesItsLogits) {
  TransformerConfig c = MidSizedLayers(1, Precision::kFp8);
  c.shape.layers = 1;
  c.shape.vocab = 32768;
  const double gemm = 2.0 * 2048 * 32768 * 1024 / (794.5e12 * 32768 / 32868);
  const double logits = 2048.0 * 32768;
  struct Expected {
    CrossEntropyKernels kernels;
    const char* name;
    double forward_bytes, backward_bytes;
    int forward_kernels, backward_kernels;  // the GEMMs' included
  };
  for (const Expected& e : {Expected{CrossEntropyKernels::kUnfused, "unfused", 38, 14, 7, 4},
                            Expected{CrossEntropyKernels::kFused, "fused", 22, 6, 4, 3},
                            Expected{CrossEntropyKernels::kTe, "te", 6, 4, 3, 3}}) {
    SCOPED_TRACE(e.name);
    c.cross_entropy = e.kernels;
    const JobPrograms job = MakeTransformerJob(c);
    int found = 0;
    for (const Op& op : job.programs.front()->ops) {
      if (op.label == "F0 logits") {
        ++found;
        EXPECT_NEAR(op.cost.gemm_s, gemm, 1e-10);
        EXPECT_NEAR(op.cost.memory_s, e.forward_bytes * logits / 3.35e12, 1e-10);
        EXPECT_NEAR(op.cost.launch_s, e.forward_kernels * 4e-6, 1e-12);
      } else if (op.label == "B0 logits") {
        ++found;
        EXPECT_NEAR(op.cost.gemm_s, 2 * gemm, 1e-10);
        EXPECT_NEAR(op.cost.memory_s, e.backward_bytes * logits / 3.35e12, 1e-10);
        EXPECT_NEAR(op.cost.launch_s, e.backward_kernels * 4e-6, 1e-12);
      }
    }
    EXPECT_EQ(found, 2);
  }
}

// With tensor-parallel overlap on an H100 (t = 2, sequence parallelism): the forward's second
// MLP projection is pipelined with its reduce-scatter in 4 chunks, all on the 116 SMs the
// communication kernel's 16 leave: a quarter before the reduction (x 132 / 116), three
// quarters beside it (the same); the first projection beside the ring-exchange all-gather keeps
// every SM: half of it before its own chunk, half after. The backward's first projection: its
// input gradient before the reduce-scatter at full speed, its weight gradient beside it slowed.
TEST(ComputeModel, TensorParallelOverlapCostsTheGemmsBesideItTheirSms) {
  TransformerConfig c = MidSizedLayers(2, Precision::kBf16);
  c.sequence_parallel = true;
  c.tp_comm_overlap = true;
  const ComputeModel& m = c.compute;
  const Gemm fc1{2048, 4096 / 2, 1024};
  const Gemm fc2{2048, 1024, 4096 / 2};
  const double slow = 132.0 / 116;
  const JobPrograms job = MakeTransformerJob(c);
  std::map<std::string, double> gemm;
  for (const Op& op : job.programs.front()->ops) {
    if (op.kind == OpKind::kCompute) gemm[op.label] = op.cost.gemm_s;
  }
  EXPECT_NEAR(gemm.at("F0 L0 mlp lead"), m.Gemms({fc1}).gemm_s / 2, 1e-12);
  EXPECT_NEAR(gemm.at("F0 L0 mlp lead chunk"), m.Gemms({fc1}).gemm_s / 2, 1e-12);
  EXPECT_NEAR(gemm.at("F0 L0 mlp before rs"), m.Gemms({fc2}).gemm_s / 4 * slow, 1e-12);
  EXPECT_NEAR(gemm.at("F0 L0 mlp beside rs"), m.Gemms({fc2}).gemm_s * 3 / 4 * slow, 1e-12);
  const std::vector<Gemm> fc1_backward = BackwardGemms({fc1});
  EXPECT_NEAR(gemm.at("B0 L0 mlp before rs"), m.Gemms({fc1_backward[0]}).gemm_s, 1e-12);
  EXPECT_NEAR(gemm.at("B0 L0 mlp beside rs"), m.Gemms({fc1_backward[1]}).gemm_s * slow, 1e-12);
}

TEST(ComputeModel, EveryPresetRunsAtOneAndItsLargestTensorParallelism) {
  for (const std::string& name : TransformerPresetNames()) {
    TransformerConfig c;
    c.shape = *FindTransformerPreset(name);
    c.parallel = {1, 1, 1, 1, "tp-dp-pp"};
    c.micro_batch = 1;
    c.iterations = 1;
    c.compute = OnGpu("h100");
    const int widest = LargestTensorParallel(c);
    double previous = 0;
    for (int t : {1, widest}) {
      SCOPED_TRACE(name + " at t = " + std::to_string(t));
      c.parallel.tensor = t;
      const JobPrograms job = MakeTransformerJob(c);
      double seconds = 0;
      double by_kind = 0;
      for (const Op& op : job.programs.front()->ops) {
        if (op.kind != OpKind::kCompute) continue;
        seconds += op.duration_s;
        by_kind += op.cost.total();
      }
      EXPECT_GT(seconds, 0);
      EXPECT_NEAR(by_kind, seconds, 1e-9 * seconds);
      if (t > 1) {
        EXPECT_LT(seconds, previous);
      }
      previous = seconds;
    }
    EXPECT_GE(widest, 8) << name;
  }
}

}  // namespace
}  // namespace nbox::work
