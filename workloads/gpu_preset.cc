#include "workloads/gpu_preset.h"

namespace nbox::work {
namespace {

constexpr double kT = 1e12;  // TFLOP/s, TB/s

// FlashAttention-2, forward and backward, as its repository's benchmark figures report them
// (Dao-AILab/flash-attention, assets/flash2_a100_fwd_bwd_benchmark.png and
// flash2_h100_fwd_bwd_benchmark.png: batch 16k / s, hidden 2048, FP16/BF16), in TFLOP/s-
// equivalents at s = 512 .. 16k. One value (A100, head dim 128, no mask, s = 512) has its label
// hidden behind the legend and is read off the bar's height.
const std::vector<double> kFlashSeqLens = {512, 1024, 2048, 4096, 8192, 16384};

std::vector<AttentionRates> Flash2A100() {
  return {{64,
           kFlashSeqLens,
           {88 * kT, 119 * kT, 140 * kT, 156 * kT, 165 * kT, 171 * kT},
           {132 * kT, 153 * kT, 162 * kT, 171 * kT, 175 * kT, 176 * kT}},
          {128,
           kFlashSeqLens,
           {99 * kT, 133 * kT, 155 * kT, 173 * kT, 182 * kT, 189 * kT},
           {150 * kT, 173 * kT, 187 * kT, 196 * kT, 201 * kT, 203 * kT}}};
}

std::vector<AttentionRates> Flash2H100() {
  return {{64,
           kFlashSeqLens,
           {141 * kT, 192 * kT, 232 * kT, 257 * kT, 273 * kT, 284 * kT},
           {215 * kT, 254 * kT, 274 * kT, 288 * kT, 294 * kT, 296 * kT}},
          {128,
           kFlashSeqLens,
           {163 * kT, 221 * kT, 265 * kT, 294 * kT, 308 * kT, 328 * kT},
           {248 * kT, 294 * kT, 320 * kT, 326 * kT, 335 * kT, 338 * kT}}};
}

}  // namespace

std::string_view ToString(Precision precision) {
  return precision == Precision::kFp8 ? "fp8" : "bf16";
}

const std::vector<GpuPreset>& GpuPresets() {
  // Peaks and bandwidths: NVIDIA's datasheets (A100 80GB SXM, H100 SXM, H200 SXM, HGX B200).
  // Achievable matmul rates: the Maximum Achievable Matmul FLOPS table of stas00/ml-engineering
  // (compute/accelerator/README.md; mamf-finder.py, BF16 and float8_e4m3fn, mean of 100
  // iterations at the best shape found), which says H200's BF16 rate is H100's.
  static const std::vector<GpuPreset> presets = {
      {"a100", "NVIDIA A100 SXM4 80GB", 312 * kT, 0, 271.2 * kT, 0, 2.039 * kT, 108, Flash2A100(),
       "NVIDIA A100 datasheet; ml-engineering MAMF table (torch 2.6.0+cu126); FlashAttention-2 "
       "benchmark on A100 80GB SXM4"},
      {"h100", "NVIDIA H100 SXM5 80GB", 989 * kT, 1979 * kT, 794.5 * kT, 1402.6 * kT, 3.35 * kT,
       132, Flash2H100(),
       "NVIDIA H100 datasheet; ml-engineering MAMF table (torch 2.7.0+cu126); FlashAttention-2 "
       "benchmark on H100 80GB SXM5"},
      {"h200", "NVIDIA H200 SXM 141GB", 989 * kT, 1979 * kT, 794.5 * kT, 1453.4 * kT, 4.8 * kT, 132,
       Flash2H100(),
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
