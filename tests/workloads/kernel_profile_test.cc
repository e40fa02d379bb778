// Measured kernels from a PyTorch profiler trace (workloads/kernel_profile.h) and their use by
// the compute model (compute = profile). The fixtures are written by hand in Kineto's format:
// each expected time below is read off the fixture's events.
#include "workloads/kernel_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/workloads/small_transformer.h"
#include "workloads/compute_model.h"
#include "workloads/gpu_preset.h"

namespace nbox::work {
namespace {

constexpr const char* kGpuTrace = "tests/workloads/fixtures/kineto_step_gpu.json";
constexpr const char* kCpuTrace = "tests/workloads/fixtures/kineto_step_cpu.json";

TEST(KernelProfile, TakesTheKernelsEachOperatorLaunchedByShape) {
  const KernelProfile p = ReadKernelProfile(kGpuTrace);
  EXPECT_TRUE(p.gpu_times);
  // aten::mm 32x64 times 64x192, three times: kernels of 30, 34 and 20 + 12 us; the median.
  EXPECT_DOUBLE_EQ(*p.Gemm(32, 192, 64, 1), 32e-6);
  // aten::addmm: the bias comes first; 40 us.
  EXPECT_DOUBLE_EQ(*p.Gemm(32, 256, 64, 1), 40e-6);
  // aten::bmm of 4: one batched kernel of 6 us.
  EXPECT_DOUBLE_EQ(*p.Gemm(32, 32, 16, 4), 6e-6);
  // A GEMM's transpose is the same kernel shape (autograd's weight gradients are dY^T X).
  EXPECT_DOUBLE_EQ(*p.Gemm(192, 32, 64, 1), 32e-6);
  // A shape measured unbatched stands for a batch of it.
  EXPECT_DOUBLE_EQ(*p.Gemm(32, 192, 64, 3), 3 * 32e-6);
  // The 8x8 aten::mm launched no kernel, and aten::linear is not a GEMM of its own.
  EXPECT_FALSE(p.Gemm(8, 8, 8, 1).has_value());
  EXPECT_EQ(p.gemm_s.size(), 3u);
  // Flash attention: batch 1, 4 heads, 32 queries and keys of 16; the backward's queries and
  // keys come after its output gradient.
  EXPECT_DOUBLE_EQ(*p.Attention({1, 4, 32, 32, 16}, false), 50e-6);
  EXPECT_DOUBLE_EQ(*p.Attention({1, 4, 32, 32, 16}, true), 120e-6);
  EXPECT_FALSE(p.Attention({1, 4, 64, 64, 16}, false).has_value());
}

TEST(KernelProfile, ATraceWithoutGpuKernelsTakesTheOperatorsOwnTimes) {
  const KernelProfile p = ReadKernelProfile(kCpuTrace);
  EXPECT_FALSE(p.gpu_times);
  EXPECT_DOUBLE_EQ(*p.Gemm(32, 192, 64, 1), 200e-6);  // the median of 100 and 300 us
}

void ExpectRefused(const std::string& text, const std::string& expected) {
  const std::string path = ::testing::TempDir() + "kernel_profile_bad.json";
  std::ofstream(path) << text;
  try {
    ReadKernelProfile(path);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path, 0), 0u) << what;
    EXPECT_NE(what.find(expected), std::string::npos) << what;
  }
  std::remove(path.c_str());
}

TEST(KernelProfile, ATraceItCannotUseIsRefusedNamingTheFileAndWhy) {
  ExpectRefused("{\"traceEvents\": [", "not a PyTorch profiler trace: parse error");
  // The legacy profiler's export (a bare list, no shapes), as a torch without Kineto writes.
  ExpectRefused("[{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2}]",
                "expected an object with a \"traceEvents\" list");
  ExpectRefused(
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"dur\": "
      "3}]}",
      "traceEvents[0]: aten::mm has no \"Input Dims\" (record the trace with "
      "record_shapes=True)");
  ExpectRefused(
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"dur\": "
      "3, \"args\": {\"Input Dims\": [[2, 3]]}}]}",
      "aten::mm takes two 2-dimensional matrices");
  ExpectRefused(
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", "
      "\"dur\": 3}]}",
      "the trace has no GEMM");
}

ComputeModel OnH100(std::shared_ptr<const KernelProfile> profile) {
  ComputeModel model;
  model.mode = ComputeModel::Mode::kModel;
  model.gpu = FindGpuPreset("h100");
  model.profile = std::move(profile);
  return model;
}

TEST(KernelProfile, AMeasuredShapeTakesItsTimeAndTheRestKeepTheModels) {
  const auto profile = std::make_shared<const KernelProfile>(ReadKernelProfile(kGpuTrace));
  const ComputeModel measured = OnH100(profile);
  const ComputeModel modelled = OnH100(nullptr);
  const Gemm qkv{32, 192, 64};
  EXPECT_DOUBLE_EQ(measured.Gemms({qkv}).gemm_s, 32e-6);
  // The cost of launching a kernel stays the model's: a kernel's time on the GPU leaves it out.
  EXPECT_DOUBLE_EQ(measured.Gemms({qkv}).launch_s, modelled.Gemms({qkv}).launch_s);
  const Gemm other{32, 64, 64};
  EXPECT_DOUBLE_EQ(measured.Gemms({other}).gemm_s, modelled.Gemms({other}).gemm_s);
  AttentionCall call;
  call.heads = 4;
  call.head_dim = 16;
  call.queries = 32;
  call.keys = 32;
  EXPECT_DOUBLE_EQ(measured.Attention(call, false).attention_s, 50e-6);
  EXPECT_DOUBLE_EQ(measured.Attention(call, true).attention_s, 120e-6);
  call.queries = call.keys = 64;
  EXPECT_DOUBLE_EQ(measured.Attention(call, false).attention_s,
                   modelled.Attention(call, false).attention_s);
}

// A 4-layer transformer of width 64 on one GPU, two micro-batches of 32 tokens: each layer's
// forward runs the QKV projection (32 x 192 x 64), the MLP's first GEMM (32 x 256 x 64) and
// flash attention (4 heads of 16 over 32 tokens) once per micro-batch, 8 times in all; its
// backward runs the attention's backward and the data gradient of the MLP's second GEMM
// (32 x 64 x 256 forward, so 32 x 256 x 64: the first GEMM's shape) 8 times. Only those change
// under the profile.
TEST(KernelProfile, AJobTakesTheMeasuredTimeOfEveryCallOfAMeasuredShape) {
  TransformerConfig c = testing::SmallTransformer(1, 1, 1, 2, PipelineSchedule::kOneFOneB);
  c.compute = OnH100(nullptr);
  const auto sum = [](const JobPrograms& job) {
    ComputeCost total;
    for (const Op& op : job.programs[0]->ops) total += op.cost;
    return total;
  };
  const ComputeCost modelled = sum(MakeTransformerJob(c));
  c.compute.profile = std::make_shared<const KernelProfile>(ReadKernelProfile(kGpuTrace));
  const ComputeCost measured = sum(MakeTransformerJob(c));

  const ComputeModel model = OnH100(nullptr);
  const double qkv = model.Gemms({{32, 192, 64}}).gemm_s;
  const double fc1 = model.Gemms({{32, 256, 64}}).gemm_s;
  AttentionCall call;
  call.heads = 4;
  call.head_dim = 16;
  call.queries = 32;
  call.keys = 32;
  const double forward = model.Attention(call, false).attention_s;
  const double backward = model.Attention(call, true).attention_s;
  EXPECT_NEAR(measured.gemm_s - modelled.gemm_s, 8 * (32e-6 - qkv) + 16 * (40e-6 - fc1), 1e-12);
  EXPECT_NEAR(measured.attention_s - modelled.attention_s,
              8 * (50e-6 - forward) + 8 * (120e-6 - backward), 1e-12);
  EXPECT_DOUBLE_EQ(measured.memory_s, modelled.memory_s);
  EXPECT_DOUBLE_EQ(measured.launch_s, modelled.launch_s);
}

}  // namespace
}  // namespace nbox::work
