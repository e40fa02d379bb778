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

// The fused attention kernels with measured rates: FlashAttention-2 (Dao-AILab/flash-attention)
// and cuDNN's (the FusedAttention backend of Transformer Engine). kAuto: the one Transformer
// Engine picks on the GPU, the preset's first.
enum class AttentionKernel { kAuto, kFlash2, kCudnn };
std::string_view ToString(AttentionKernel kernel);  // "auto", "flash2", "cudnn"

// Measured rates of one attention kernel for one head dimension: FLOP/s-equivalents (the
// causal mask's counting the lower triangle only) at sequence lengths seq_lens, forward and
// backward, with and without the causal mask. A benchmark that times forward and backward
// together gives both the same rate: their times then add up to its.
struct AttentionRates {
  int head_dim = 0;
  std::vector<double> seq_lens;  // ascending
  std::vector<double> causal_forward;
  std::vector<double> full_forward;
  std::vector<double> causal_backward;
  std::vector<double> full_backward;
};

struct AttentionKernelRates {
  AttentionKernel kernel = AttentionKernel::kFlash2;
  std::vector<AttentionRates> by_head_dim;  // ascending
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
  double memory_bytes_per_s = 0;  // HBM bandwidth, datasheet
  int sms = 0;                    // streaming multiprocessors
  // Measured attention kernels; the first is the one Transformer Engine picks on this GPU.
  std::vector<AttentionKernelRates> attention;
  std::string source;  // one line naming the sources

  // The rates of `kernel` (kAuto: the first), or nullptr where none was measured here.
  const AttentionKernelRates* AttentionOf(AttentionKernel kernel) const;
  // "flash2, cudnn": the kernels measured on this GPU, for messages.
  std::string AttentionKernelNames() const;
};

// a100, h100, h200, b200.
const std::vector<GpuPreset>& GpuPresets();
// nullptr when there is no preset of that name.
const GpuPreset* FindGpuPreset(std::string_view name);
std::vector<std::string> GpuPresetNames();

}  // namespace nbox::work
