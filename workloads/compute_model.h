// How long a GPU takes for a piece of work, shared by every workload (workloads/README.md,
// "Compute"). Two ways to time it:
//
// - by utilisation (`util`): FLOPs at an achieved fraction of the GPU's peak, bytes at its memory
//   bandwidth (where one is given; memory-bound work is free otherwise), one number for every
//   shape;
// - per operation (`model`), on a GPU preset (gpu_preset.h): each GEMM by its shape (the
//   achievable matmul rate, wave quantization on the GPU's SMs, the memory roofline, a fixed
//   cost per kernel), flash attention by sequence, head dimension and mask (measured rates),
//   memory-bound kernels and the optimizer step by the bytes they move;
// - per operation with measured kernels (`profile`): as `model`, but a GEMM or flash attention
//   call whose shape a profiler trace measured (kernel_profile.h) takes the measured time.
//
// A cost keeps what each kind of kernel spent, so reports can split compute as a GPU profile
// does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/gpu_preset.h"
#include "workloads/kernel_profile.h"

namespace nbox::work {

enum class ComputeKind {
  kMatmul,     // dense GEMMs: linear layers, MLPs, logits, experts
  kAttention,  // attention's score and value products
  kMemory,     // memory-bound work, timed by bytes moved (embedding lookups and updates)
};

// Seconds spent, by the kind of kernel that spends them.
struct ComputeCost {
  double gemm_s = 0;
  double attention_s = 0;
  double memory_s = 0;     // memory-bound kernels: norms, activations, dropout, residuals, ...
  double optimizer_s = 0;  // the optimizer step
  double launch_s = 0;     // the fixed cost of each kernel
  double total() const { return gemm_s + attention_s + memory_s + optimizer_s + launch_s; }
  ComputeCost& operator+=(const ComputeCost& other);
  ComputeCost operator+(const ComputeCost& other) const;
  ComputeCost operator*(double factor) const;
};

// One GEMM (or `count` of the same shape, as a batched GEMM): an m x k matrix times a k x n
// one, inputs in `precision`, the m x n output in bf16.
struct Gemm {
  double m = 0;
  double n = 0;
  double k = 0;
  double count = 1;
  // In FP8, its m x k input is quantized first (Transformer Engine's cast-transpose: read in
  // bf16, written in FP8 and FP8 transposed for the backward); false where that was done already
  // (a weight gradient's input, transposed in the forward).
  bool casts_input = true;
  double flops() const { return 2 * m * n * k * count; }
};

// One attention call of `batch` sequences: `heads` query heads with queries and keys of
// `head_dim` and values of `value_dim` (multi-head latent attention's differ; 0 = head_dim),
// `queries` query tokens against `keys` key tokens each, with or without the causal mask.
struct AttentionCall {
  double batch = 1;
  double heads = 1;
  double head_dim = 64;
  double value_dim = 0;
  double queries = 0;
  double keys = 0;
  bool causal = true;
  bool flash = true;  // one fused kernel; else two batched GEMMs and softmax and dropout passes
  // FLOPs of its forward as flash attention counts them (the lower triangle only when causal).
  double ForwardFlops() const;
};

struct ComputeModel {
  enum class Mode { kUtil, kModel };
  Mode mode = Mode::kUtil;

  // kUtil
  double peak_flops = 125e12;        // FLOP/s of one GPU at its training precision
  double utilization = 0.4;          // achieved fraction of the peak for matmuls, in (0, 1]
  double attention_utilization = 0;  // the same for attention; 0 = `utilization`
  double memory_bytes_per_s = 0;     // memory bandwidth for kMemory; 0 = none given

  // kModel
  const GpuPreset* gpu = nullptr;
  Precision precision = Precision::kBf16;
  // Flash attention's kernel: one measured on `gpu`; kAuto, the one Transformer Engine picks.
  AttentionKernel attention_kernel = AttentionKernel::kAuto;
  // Measured kernel times (compute = profile): a shape it holds takes its time; null: none.
  std::shared_ptr<const KernelProfile> profile;

  // Seconds for `amount` of work of `kind`: FLOPs for kMatmul and kAttention, bytes for
  // kMemory, by utilisation (the workloads that know no shapes). Throws std::logic_error for
  // kMemory without a memory bandwidth.
  double Seconds(ComputeKind kind, double amount) const;

  // Per operation: every GEMM of a list; an attention call's forward, or its backward; memory-
  // bound kernels moving `bytes` in all; the optimizer step over `bytes`. By utilisation, GEMMs
  // and attention are their FLOPs at the rates above (attention over the full square, as
  // Megatron counts it) and memory-bound work its bytes at memory_bytes_per_s (nothing without
  // one, as before per-operation timing).
  ComputeCost Gemms(const std::vector<Gemm>& gemms) const;
  ComputeCost Attention(const AttentionCall& call, bool backward) const;
  ComputeCost MemoryBound(double bytes, int kernels) const;
  ComputeCost Optimizer(double bytes, int kernels) const;

  // The matmul rate a GEMM of that precision reaches at best on the preset (kModel).
  double AchievableFlops() const;
  // The same model on BF16 tensor cores: for the kernels FP8 recipes keep in BF16 (attention's
  // products; the output layer, which is Megatron's own linear layer, not Transformer Engine's).
  ComputeModel InBf16() const;
  // `profile`'s time for the GEMM or attention call, or nullopt where it has none.
  std::optional<double> Measured(const Gemm& gemm) const;
  std::optional<double> Measured(const AttentionCall& call, bool backward) const;
};

// Throws std::invalid_argument naming "<owner>.<field>", the rule and the value.
void ValidateComputeModel(const ComputeModel& model, const std::string& owner);

}  // namespace nbox::work
