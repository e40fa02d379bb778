// [workload] keys of the transformer and moe kinds: a job loads with its derived data-parallel
// size, and every way of getting it wrong names the keys, their values and where they came
// from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "scenario_test_support.h"
#include "tools/cosim/scenario/workload_config.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;
using ::testing::HasSubstr;
using testing::LoadError;

const std::string kJob = Fixture("transformer.ini");

TEST(TransformerKeys, AJobLoadsWithItsDerivedDataParallelism) {
  const Scenario s = LoadScenario(kJob);
  EXPECT_EQ(s.workload.kind, "transformer");
  EXPECT_EQ(s.workload.tensor_parallel, 8);
  const work::TransformerConfig c = TransformerConfigOf(s);
  EXPECT_EQ(c.parallel.data, 4);
  EXPECT_EQ(c.Microbatches(), 16);
  EXPECT_EQ(c.shape.hidden, 5120);
  EXPECT_EQ(c.gradient_bytes, 2u);
}

TEST(TransformerKeys, ShapeKeysOverrideThePreset) {
  const Scenario s = LoadScenario(kJob, {"workload.layers=8", "workload.seq_len=1024"});
  const work::TransformerConfig c = TransformerConfigOf(s);
  EXPECT_EQ(c.shape.layers, 8);
  EXPECT_EQ(c.shape.seq_len, 1024);
  EXPECT_EQ(c.shape.heads, 40);
}

TEST(TransformerKeys, TheParallelismMustFitTheWorld) {
  EXPECT_THAT(LoadError(kJob, {"job.world_size=60"}),
              HasSubstr("job.world_size = 60 (--set) is not a multiple of tensor x context x "
                        "pipeline = 16 (workload.tensor_parallel = 8 (line 7), "
                        "workload.context_parallel = 1 (default), workload.pipeline_parallel = 2 "
                        "(line 8))"));
  EXPECT_THAT(LoadError(kJob, {"workload.data_parallel=2"}),
              HasSubstr("tensor x context x pipeline x data = 32"));
  EXPECT_THAT(LoadError(kJob, {"workload.context_parallel=3"}),
              HasSubstr("tensor x context x pipeline = 48"));
}

TEST(TransformerKeys, ContextParallelismTakesItsRanksFromTheDataParallelSize) {
  const Scenario s = LoadScenario(kJob, {"workload.context_parallel=2"});
  const work::TransformerConfig c = TransformerConfigOf(s);
  EXPECT_EQ(c.parallel.context, 2);
  EXPECT_EQ(c.parallel.data, 2);  // 64 / (8 x 2 x 2)
  EXPECT_EQ(LoadError(kJob, {"workload.context_parallel=2", "workload.order=cp-tp-dp-pp",
                             "workload.global_batch=32"}),
            "");
  EXPECT_THAT(LoadError(kJob, {"workload.order=tp-cp-cp-pp"}),
              HasSubstr("--set workload.order=tp-cp-cp-pp: [workload] order = 'tp-cp-cp-pp': "
                        "expected tp, dp, pp and optionally cp joined by '-'"));
  // GPT-3 13B's 2048 tokens do not split into 2 c chunks for c = 3 (on 48 ranks).
  EXPECT_THAT(LoadError(kJob, {"job.world_size=48", "workload.context_parallel=3",
                               "workload.global_batch=2"}),
              HasSubstr("workload.context_parallel = 3 (--set): seq_len (2048) must be a multiple "
                        "of 2 x context (6)"));
  // Mixture-of-experts layers take context parallelism too.
  EXPECT_EQ(LoadError(kJob, {"workload.kind=moe", "workload.model=mixtral-8x7b",
                             "workload.context_parallel=2", "workload.expert_parallel=2",
                             "workload.sequence_parallel=on"}),
            "");
}

TEST(TransformerKeys, GeneratorRulesNameTheirKeys) {
  EXPECT_THAT(
      LoadError(kJob, {"workload.tensor_parallel=16", "workload.pipeline_parallel=1",
                       "workload.global_batch=4"}),
      HasSubstr("workload.tensor_parallel = 16 (--set): 16 does not divide the heads (40)"));
  EXPECT_THAT(LoadError(kJob, {"workload.global_batch=6"}),
              HasSubstr("workload.global_batch = 6 (--set): 6 is not a multiple of micro_batch x "
                        "data (4)"));
}

TEST(TransformerKeys, TheModelMustBeOfTheKind) {
  EXPECT_THAT(LoadError(kJob, {"workload.model=resnet50"}),
              HasSubstr("workload.model = resnet50 (--set) is not a model of workload.kind = "
                        "transformer (line 5)"));
  EXPECT_THAT(LoadError(kJob, {"workload.model=mixtral-8x7b"}),
              HasSubstr("is a mixture-of-experts model; use workload.kind = moe"));
  EXPECT_THAT(
      LoadError(kJob, {"workload.kind=ddp"}),
      HasSubstr("workload.tensor_parallel = 8 (line 7) is not used by workload.kind = ddp"));
  EXPECT_THAT(LoadError(kJob, {"workload.batch_per_rank=4"}),
              HasSubstr("workload.batch_per_rank = 4 (--set) is not used by workload.kind = "
                        "transformer (line 5)"));
  EXPECT_THAT(LoadError(kJob, {"workload.experts=8"}),
              HasSubstr("workload.experts = 8 (--set) is not used by workload.kind = transformer"));
}

TEST(TransformerKeys, ACustomModelNeedsItsShape) {
  EXPECT_THAT(LoadError(kJob, {"workload.model=custom", "workload.layers=4"}),
              HasSubstr("requires the shape keys; missing: workload.hidden, workload.heads, "
                        "workload.ffn, workload.vocab, workload.seq_len"));
}

TEST(TransformerKeys, MoeWithTensorAndExpertParallelismNeedsSequenceParallelism) {
  const std::vector<std::string> moe = {"workload.kind=moe", "workload.model=mixtral-8x7b",
                                        "workload.expert_parallel=4", "workload.seq_len=4096"};
  EXPECT_THAT(LoadError(kJob, moe),
              HasSubstr("workload.sequence_parallel = off (default): must be on with tensor and "
                        "expert parallelism together"));
  std::vector<std::string> fixed = moe;
  fixed.push_back("workload.sequence_parallel=on");
  EXPECT_EQ(LoadError(kJob, fixed), "");
}

TEST(TransformerKeys, HierarchicalContextParallelismNeedsItsBlocks) {
  const std::vector<std::string> hierarchical = {"workload.context_parallel=4",
                                                 "workload.context_parallel_comm=a2a+p2p"};
  EXPECT_THAT(LoadError(kJob, hierarchical),
              HasSubstr("workload.context_a2a = 0 (default): 0: a2a+p2p needs all-to-all groups "
                        "of a ranks, 1 < a < context (4) and dividing it"));
  std::vector<std::string> blocks = hierarchical;
  blocks.push_back("workload.context_a2a=2");
  // GPT-3 13B's 40 heads over t = 8 are 5 per tensor rank, which blocks of 2 cannot split.
  EXPECT_THAT(LoadError(kJob, blocks), HasSubstr("must be multiples of tensor x 2 (16)"));
  blocks.push_back("workload.tensor_parallel=4");
  const work::TransformerConfig c = TransformerConfigOf(LoadScenario(kJob, blocks));
  EXPECT_EQ(c.context_parallel_comm, work::ContextParallelComm::kA2aP2p);
  EXPECT_EQ(c.context_a2a, 2);
  EXPECT_THAT(LoadError(kJob, {"workload.context_parallel=4", "workload.context_a2a=2"}),
              HasSubstr("only a2a+p2p splits the context ranks into all-to-all groups"));
}

TEST(TransformerKeys, SharedExpertOverlapNeedsASharedExpert) {
  const std::vector<std::string> mixtral = {"workload.kind=moe", "workload.model=mixtral-8x7b",
                                            "workload.seq_len=4096",
                                            "workload.shared_expert_overlap=on"};
  EXPECT_THAT(LoadError(kJob, mixtral),
              HasSubstr("workload.shared_expert_overlap = on (--set): needs a shared expert"));
  std::vector<std::string> qwen = mixtral;
  qwen[1] = "workload.model=qwen1.5-moe-a2.7b";
  EXPECT_TRUE(TransformerConfigOf(LoadScenario(kJob, qwen)).shared_expert_overlap);
}

TEST(TransformerKeys, OverlappedParameterGathersNeedTheDistributedOptimizer) {
  EXPECT_THAT(LoadError(kJob, {"workload.overlap_param_gather=on"}),
              HasSubstr("workload.overlap_param_gather = on (--set): needs the distributed "
                        "optimizer (data_parallel_mode zero1 or zero2)"));
  const Scenario s =
      LoadScenario(kJob, {"workload.overlap_param_gather=on", "workload.data_parallel_mode=zero1"});
  EXPECT_TRUE(TransformerConfigOf(s).overlap_param_gather);
}

// overlap_grad_reduce left at auto takes the mode's default (set by the program); on or off
// applies to ddp, zero1 and zero2. fsdp reduces layer by layer: on is refused, off is what it
// does anyway.
TEST(TransformerKeys, GradientReductionOverlapIsAutoOnOrOffButNotForFsdp) {
  EXPECT_FALSE(TransformerConfigOf(LoadScenario(kJob, {})).overlap_grad_reduce.has_value());
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.overlap_grad_reduce=off"}))
                .overlap_grad_reduce,
            std::optional<bool>(false));
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.overlap_grad_reduce=on",
                                                    "workload.data_parallel_mode=zero1"}))
                .overlap_grad_reduce,
            std::optional<bool>(true));
  EXPECT_FALSE(TransformerConfigOf(LoadScenario(kJob, {"workload.overlap_grad_reduce=auto",
                                                       "workload.data_parallel_mode=fsdp"}))
                   .overlap_grad_reduce.has_value());
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.overlap_grad_reduce=off",
                                                    "workload.data_parallel_mode=fsdp"}))
                .overlap_grad_reduce,
            std::optional<bool>(false));
  EXPECT_THAT(
      LoadError(kJob, {"workload.overlap_grad_reduce=on", "workload.data_parallel_mode=fsdp"}),
      HasSubstr("workload.overlap_grad_reduce = on (--set): applies to "
                "data_parallel_mode ddp, zero1 and zero2"));
  EXPECT_THAT(LoadError(kJob, {"workload.overlap_grad_reduce=sometimes"}),
              HasSubstr("auto, on or off"));
}

TEST(TransformerKeys, TensorParallelOverlapNeedsSequenceParallelism) {
  EXPECT_THAT(LoadError(kJob, {"workload.tp_comm_overlap=on", "workload.tensor_parallel=2"}),
              HasSubstr("workload.tp_comm_overlap = on (--set): needs sequence_parallel"));
  EXPECT_TRUE(TransformerConfigOf(
                  LoadScenario(kJob, {"workload.tp_comm_overlap=on", "workload.tensor_parallel=2",
                                      "workload.sequence_parallel=on"}))
                  .tp_comm_overlap);
  // The loss's kernels are timed per operation only; by utilisation they mean nothing.
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.cross_entropy=te",
                                                    "workload.compute=model", "workload.gpu=h100"}))
                .cross_entropy,
            work::CrossEntropyKernels::kTe);
  EXPECT_THAT(LoadError(kJob, {"workload.cross_entropy=liger"}),
              HasSubstr("one of unfused, fused, te"));
  EXPECT_THAT(LoadError(kJob, {"workload.cross_entropy=fused"}),
              HasSubstr("workload.cross_entropy = fused (--set) is not used by "
                        "workload.compute = util"));
}

// The attention kernel is one the GPU preset has measured rates of; it times the fused kernel
// per operation, so unfused attention or compute = util refuses it.
TEST(TransformerKeys, TheAttentionKernelIsOneMeasuredOnTheGpu) {
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.attention_kernel=flash2",
                                                    "workload.compute=model", "workload.gpu=h100"}))
                .compute.attention_kernel,
            work::AttentionKernel::kFlash2);
  EXPECT_EQ(TransformerConfigOf(LoadScenario(kJob, {"workload.compute=model", "workload.gpu=h100"}))
                .compute.attention_kernel,
            work::AttentionKernel::kAuto);
  EXPECT_THAT(
      LoadError(kJob,
                {"workload.attention_kernel=cudnn", "workload.compute=model", "workload.gpu=a100"}),
      HasSubstr("workload.attention_kernel = cudnn (--set) was not measured on the NVIDIA A100 "
                "SXM4 80GB (workload.gpu = a100 (--set)): its measured kernels are flash2"));
  EXPECT_THAT(LoadError(kJob, {"workload.attention_kernel=flash2", "workload.compute=model",
                               "workload.gpu=h100", "workload.flash_attention=off"}),
              HasSubstr("runs attention unfused"));
  EXPECT_THAT(LoadError(kJob, {"workload.attention_kernel=flash2"}),
              HasSubstr("workload.attention_kernel = flash2 (--set) is not used by "
                        "workload.compute = util"));
  EXPECT_THAT(LoadError(kJob, {"workload.attention_kernel=flash3"}),
              HasSubstr("one of auto, flash2, cudnn"));
}

// compute = model needs a GPU preset with tensor cores of the precision; a GPU or a precision
// given to compute = util means nothing and is refused.
TEST(TransformerKeys, PerOperationComputeNeedsAGpuPreset) {
  EXPECT_THAT(LoadError(kJob, {"workload.compute=model"}),
              HasSubstr("workload.compute = model (--set) times compute on a GPU preset: set "
                        "workload.gpu to one of a100, h100, h200, b200"));
  EXPECT_THAT(
      LoadError(kJob, {"workload.compute=model", "workload.gpu=a100", "workload.precision=fp8"}),
      HasSubstr("workload.precision = fp8 (--set) with workload.gpu = a100 (--set): the "
                "NVIDIA A100 SXM4 80GB has no FP8 tensor cores"));
  EXPECT_THAT(LoadError(kJob, {"workload.gpu=h100"}),
              HasSubstr("workload.gpu = h100 (--set) is not used by workload.compute = util "
                        "(default)"));
  const work::TransformerConfig c = TransformerConfigOf(LoadScenario(
      kJob, {"workload.compute=model", "workload.gpu=h200", "workload.precision=fp8"}));
  EXPECT_EQ(c.compute.mode, work::ComputeModel::Mode::kModel);
  EXPECT_EQ(c.compute.gpu->name, "h200");
  EXPECT_EQ(c.compute.precision, work::Precision::kFp8);
}

// compute = profile: the model on a GPU preset, with the trace workload.compute_profile names
// (relative to the scenario's folder, as every file key) read into it; the key is required
// then and refused otherwise, and a missing file is named.
TEST(TransformerKeys, ComputeByProfileReadsTheTraceTheScenarioNames) {
  const std::string trace =
      std::filesystem::absolute("tests/workloads/fixtures/kineto_step_gpu.json").string();
  const work::TransformerConfig c =
      TransformerConfigOf(LoadScenario(kJob, {"workload.compute=profile", "workload.gpu=h100",
                                              "workload.compute_profile=" + trace}));
  EXPECT_EQ(c.compute.mode, work::ComputeModel::Mode::kModel);
  ASSERT_NE(c.compute.profile, nullptr);
  EXPECT_DOUBLE_EQ(*c.compute.profile->Gemm(32, 192, 64, 1), 32e-6);
  EXPECT_THAT(LoadError(kJob, {"workload.compute=profile", "workload.gpu=h100"}),
              HasSubstr("workload.compute = profile (--set) requires workload.compute_profile"));
  EXPECT_THAT(LoadError(kJob, {"workload.compute=model", "workload.gpu=h100",
                               "workload.compute_profile=" + trace}),
              HasSubstr("workload.compute_profile = " + trace +
                        " (--set) is used only with workload.compute = profile"));
  EXPECT_THAT(LoadError(kJob, {"workload.compute=profile", "workload.gpu=h100",
                               "workload.compute_profile=no-such-step.json"}),
              HasSubstr("no such file"));
  EXPECT_THAT(LoadError(kJob, {"workload.compute=profile"}),
              HasSubstr("set workload.gpu to one of"));
}

// A GPT-style custom shape: GeLU MLP, tied embeddings, heads wider than hidden / heads.
TEST(TransformerKeys, ACustomShapeMayBeGptStyle) {
  const std::vector<std::string> custom = {"workload.model=custom", "workload.layers=24",
                                           "workload.hidden=2048",  "workload.heads=24",
                                           "workload.head_dim=128", "workload.ffn=8192",
                                           "workload.vocab=50257",  "workload.seq_len=2048"};
  const work::TransformerConfig llama_style = TransformerConfigOf(LoadScenario(kJob, custom));
  EXPECT_TRUE(llama_style.shape.gated_mlp);
  EXPECT_FALSE(llama_style.shape.tied_embeddings);
  std::vector<std::string> gpt = custom;
  gpt.insert(gpt.end(), {"workload.mlp=gelu", "workload.tied_embeddings=on"});
  const work::TransformerConfig c = TransformerConfigOf(LoadScenario(kJob, gpt));
  EXPECT_FALSE(c.shape.gated_mlp);
  EXPECT_TRUE(c.shape.tied_embeddings);
  EXPECT_EQ(c.shape.HeadDim(), 128);
  // GPT-3 1.3B's parameters: 24 layers of 4 x 2048 x 3072 attention, 2 x 2048 x 8192 MLP and
  // two norms of 2048, the tied embedding and the final norm.
  EXPECT_EQ(c.shape.Parameters(),
            24ull * (4ull * 2048 * 3072 + 2ull * 2048 * 8192 + 2 * 2048) + 50257ull * 2048 + 2048);
}

}  // namespace
}  // namespace nbox::scenario
