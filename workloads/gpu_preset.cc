#include "workloads/gpu_preset.h"

namespace nbox::work {
namespace {

constexpr double kT = 1e12;  // TFLOP/s, TB/s

// FlashAttention-2, forward and backward, as its repository's benchmark figures report them
// (Dao-AILab/flash-attention, assets/flash2_a100_fwd_bwd_benchmark.png and
// flash2_h100_fwd_bwd_benchmark.png: batch 16k / s, hidden 2048, FP16/BF16), in TFLOP/s-
// equivalents at s = 512 .. 16k. One value (A100, head dim 128, no mask, s = 512) has its label
// hidden behind the legend and is read off the bar's height.
// FlashAttention-2's and -3's benchmarks measure the same lengths, 16k tokens at each.
const std::vector<double> kBenchmarkSeqLens = {512, 1024, 2048, 4096, 8192, 16384};

// A benchmark of forward and backward together: both at its rate.
AttentionRates FwdBwd(int head_dim, std::vector<double> causal, std::vector<double> full) {
  return {head_dim, kBenchmarkSeqLens, causal, full, causal, full};
}

AttentionKernelRates Flash2A100() {
  return {AttentionKernel::kFlash2,
          {FwdBwd(64, {88 * kT, 119 * kT, 140 * kT, 156 * kT, 165 * kT, 171 * kT},
                  {132 * kT, 153 * kT, 162 * kT, 171 * kT, 175 * kT, 176 * kT}),
           FwdBwd(128, {99 * kT, 133 * kT, 155 * kT, 173 * kT, 182 * kT, 189 * kT},
                  {150 * kT, 173 * kT, 187 * kT, 196 * kT, 201 * kT, 203 * kT})}};
}

AttentionKernelRates Flash2H100() {
  return {AttentionKernel::kFlash2,
          {FwdBwd(64, {141 * kT, 192 * kT, 232 * kT, 257 * kT, 273 * kT, 284 * kT},
                  {215 * kT, 254 * kT, 274 * kT, 288 * kT, 294 * kT, 296 * kT}),
           FwdBwd(128, {163 * kT, 221 * kT, 265 * kT, 294 * kT, 308 * kT, 328 * kT},
                  {248 * kT, 294 * kT, 320 * kT, 326 * kT, 335 * kT, 338 * kT})}};
}

// cuDNN's fused attention on an H100 SXM5, BF16, as the FlashAttention-3 paper measured it
// beside its own (Shah et al. 2024, arXiv:2407.08608, Figure 5: forward, causal and not;
// Figure 6: backward, without the mask; the same setup as FlashAttention-2's figures). The paper
// has no causal backward: it is taken as the unmasked backward scaled by what the mask costs the
// forward at that length (causal_forward / full_forward).
AttentionRates MeasuredCudnn(int head_dim, std::vector<double> causal_forward,
                             std::vector<double> full_forward, std::vector<double> full_backward) {
  std::vector<double> causal_backward;
  for (size_t i = 0; i < full_backward.size(); ++i) {
    causal_backward.push_back(full_backward[i] * causal_forward[i] / full_forward[i]);
  }
  return {
      head_dim,        kBenchmarkSeqLens,       std::move(causal_forward), std::move(full_forward),
      causal_backward, std::move(full_backward)};
}

AttentionKernelRates CudnnH100() {
  return {AttentionKernel::kCudnn,
          {MeasuredCudnn(64, {225 * kT, 288 * kT, 334 * kT, 363 * kT, 379 * kT, 388 * kT},
                         {335 * kT, 373 * kT, 395 * kT, 408 * kT, 412 * kT, 413 * kT},
                         {266 * kT, 348 * kT, 395 * kT, 417 * kT, 432 * kT, 433 * kT}),
           MeasuredCudnn(128, {315 * kT, 410 * kT, 484 * kT, 518 * kT, 529 * kT, 539 * kT},
                         {497 * kT, 574 * kT, 617 * kT, 609 * kT, 600 * kT, 595 * kT},
                         {305 * kT, 408 * kT, 465 * kT, 499 * kT, 518 * kT, 516 * kT})}};
}

}  // namespace

std::string_view ToString(Precision precision) {
  return precision == Precision::kFp8 ? "fp8" : "bf16";
}

std::string_view ToString(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kAuto:
      return "auto";
    case AttentionKernel::kFlash2:
      return "flash2";
    case AttentionKernel::kCudnn:
      return "cudnn";
  }
  return "auto";
}

const AttentionKernelRates* GpuPreset::AttentionOf(AttentionKernel kernel) const {
  if (attention.empty()) return nullptr;
  if (kernel == AttentionKernel::kAuto) return &attention.front();
  for (const AttentionKernelRates& rates : attention) {
    if (rates.kernel == kernel) return &rates;
  }
  return nullptr;
}

std::string GpuPreset::AttentionKernelNames() const {
  std::string names;
  for (const AttentionKernelRates& rates : attention) {
    if (!names.empty()) names += ", ";
    names += ToString(rates.kernel);
  }
  return names.empty() ? "none" : names;
}

const std::vector<GpuPreset>& GpuPresets() {
  // Peaks and bandwidths: NVIDIA's datasheets (A100 80GB SXM, H100 SXM, H200 SXM, HGX B200).
  // Achievable matmul rates: the Maximum Achievable Matmul FLOPS table of stas00/ml-engineering
  // (compute/accelerator/README.md; mamf-finder.py, BF16 and float8_e4m3fn, mean of 100
  // iterations at the best shape found), which says H200's BF16 rate is H100's.
  static const std::vector<GpuPreset> presets = {
      {"a100",
       "NVIDIA A100 SXM4 80GB",
       312 * kT,
       0,
       271.2 * kT,
       0,
       2.039 * kT,
       108,
       {Flash2A100()},
       "NVIDIA A100 datasheet; ml-engineering MAMF table (torch 2.6.0+cu126); FlashAttention-2 "
       "benchmark on A100 80GB SXM4"},
      {"h100",
       "NVIDIA H100 SXM5 80GB",
       989 * kT,
       1979 * kT,
       794.5 * kT,
       1402.6 * kT,
       3.35 * kT,
       132,
       {CudnnH100(), Flash2H100()},
       "NVIDIA H100 datasheet; ml-engineering MAMF table (torch 2.7.0+cu126); cuDNN attention "
       "as the FlashAttention-3 paper measured it; FlashAttention-2 benchmark on H100 80GB SXM5"},
      {"h200",
       "NVIDIA H200 SXM 141GB",
       989 * kT,
       1979 * kT,
       794.5 * kT,
       1453.4 * kT,
       4.8 * kT,
       132,
       {CudnnH100(), Flash2H100()},
       "NVIDIA H200 datasheet; ml-engineering MAMF table (FP8: torch 2.7.1+cu128; BF16: as "
       "H100); attention as H100 measured it (the same SMs and clocks)"},
      {"b200",
       "NVIDIA B200 SXM 180GB",
       2250 * kT,
       4500 * kT,
       1745.0 * kT,
       3432.5 * kT,
       8.0 * kT,
       148,
       {},
       "NVIDIA HGX B200 datasheet; ml-engineering MAMF table (torch 2.7.1+cu128); no attention "
       "kernel measurement"},
  };
  return presets;
}

const GpuPreset* FindGpuPreset(std::string_view name) {
  for (const GpuPreset& preset : GpuPresets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

std::vector<std::string> GpuPresetNames() {
  std::vector<std::string> names;
  for (const GpuPreset& preset : GpuPresets()) names.push_back(preset.name);
  return names;
}

}  // namespace nbox::work
