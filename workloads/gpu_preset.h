// What the per-operation compute model (kernel_model.h) knows of a GPU: its peak rates, the
// matmul rate real libraries reach, its memory bandwidth, its SMs, and measured flash-attention
// rates. Every figure is a vendor's datasheet or a published kernel-level measurement;
// workloads/README.md ("GPU presets") gives each one's source, and nothing here was fitted to
// an end-to-end training run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nbox::work {

// The element type a GEMM's inputs are in.
enum class Precision { kBf16, kFp8 };
std::string_view ToString(Precision precision);  // "bf16", "fp8"

// Measured attention rates of one kernel (forward and backward together, as FlashAttention's
// benchmark reports them): TFLOP/s-equivalents at sequence lengths seq_lens, for one head
// dimension, with and without the causal mask (whose FLOPs count the lower triangle only).
struct AttentionRates {
  int head_dim = 0;
  std::vector<double> seq_lens;  // ascending
  std::vector<double> causal;    // FLOP/s at each length
  std::vector<double> full;      // FLOP/s at each length, no mask
};

struct GpuPreset {
  std::string name;  // "h100"
  std::string description;
  // Dense peak of the tensor cores (no sparsity), FLOP/s; 0 where the GPU has no such unit.
  double peak_bf16_flops = 0;
  double peak_fp8_flops = 0;
  // The largest matmul rate measured on the GPU (Maximum Achievable Matmul FLOPS: the best of a
  // search over shapes); 0 where none was measured.
  double achievable_bf16_flops = 0;
  double achievable_fp8_flops = 0;
  double memory_bytes_per_s = 0;          // HBM bandwidth, datasheet
  int sms = 0;                            // streaming multiprocessors
  std::vector<AttentionRates> attention;  // by head dimension, ascending
  std::string source;                     // one line naming the sources
};

// a100, h100, h200, b200.
const std::vector<GpuPreset>& GpuPresets();
// nullptr when there is no preset of that name.
const GpuPreset* FindGpuPreset(std::string_view name);
std::vector<std::string> GpuPresetNames();

}  // namespace nbox::work
