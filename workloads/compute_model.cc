#include "workloads/compute_model.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

namespace nbox::work {
namespace {

bool AllWhole(std::initializer_list<double> values) {
  for (double v : values) {
    if (!(v >= 0 && v < 1e18 && v == std::floor(v))) return false;
  }
  return true;
}

uint64_t Whole(double v) {
  return static_cast<uint64_t>(v);
}

// The per-operation model's constants (workloads/README.md, "The per-operation compute model",
// derives each).
//
// A GEMM's output tile, and the k-slice a stream-K schedule deals out to SMs: the work of one
// GEMM is tiles x k-slices units over the SMs, so only the last, partly filled round of units
// is lost (CUTLASS's and cuBLAS's stream-K and split-K on Ampere and later).
constexpr double kTileM = 128;
constexpr double kTileN = 256;
constexpr double kSliceK = 64;
// The fixed cost of one kernel on the GPU (launch, prologue, epilogue, tail): what the square
// BF16 GEMMs of pytorch/ao's float8 bench_matmul.py on a B200 (PR #2427: 1024^3 in 5.08 us,
// 2048^3 in 15.2 us, 3072^3 in 38.4 us) take beyond their FLOPs at the achievable matmul rate
// and the stream-K rounds above: 3.7 to 5.2 us; 4 us.
constexpr double kKernelOverheadS = 4e-6;
// FlashAttention counts a backward as 2.5 forwards (5 matmuls of the forward's 2).
constexpr double kFlashBackwardToForward = 2.5;
// Bytes per element of an FP8 GEMM's input cast: read in bf16, written in FP8 twice (as is and
// transposed: Hopper's FP8 GEMMs take only one layout).
constexpr double kFp8CastBytesPerElement = 4;
// Unfused attention's memory traffic per score element and head: forward, Megatron's fused
// scale-mask-softmax reading and writing bf16 (4 bytes) and dropout reading and writing them
// and writing a one-byte mask (5); backward, dropout's (5) and softmax's reading its output and
// gradient and writing one (6).
constexpr double kUnfusedForwardBytesPerScore = 9;
constexpr double kUnfusedBackwardBytesPerScore = 11;

double InputBytes(Precision precision) {
  return precision == Precision::kFp8 ? 1 : 2;
}

// Fraction of the SMs' time a GEMM keeps busy: its units of work (tiles x k-slices) over whole
// rounds of one unit per SM.
double RoundEfficiency(const Gemm& g, int sms) {
  const double tiles = g.count * std::min(std::ceil(g.m / kTileM) * std::ceil(g.n / kTileN),
                                          std::ceil(g.m / kTileN) * std::ceil(g.n / kTileM));
  const double units = tiles * std::ceil(g.k / kSliceK);
  return units / (std::ceil(units / sms) * sms);
}

// The measured rate of an attention kernel at `seq_len` for its head dimension closest to
// `head_dim` (the larger one on a tie), log-linear between measured lengths, the end values
// beyond them.
double AttentionRate(const AttentionKernelRates& kernel, double head_dim, double seq_len,
                     bool causal, bool backward) {
  const AttentionRates* best = &kernel.by_head_dim.front();
  for (const AttentionRates& rates : kernel.by_head_dim) {
    if (std::abs(rates.head_dim - head_dim) <= std::abs(best->head_dim - head_dim)) best = &rates;
  }
  const std::vector<double>& lens = best->seq_lens;
  const std::vector<double>& rate = backward
                                        ? (causal ? best->causal_backward : best->full_backward)
                                        : (causal ? best->causal_forward : best->full_forward);
  if (seq_len <= lens.front()) return rate.front();
  if (seq_len >= lens.back()) return rate.back();
  size_t i = 1;
  while (lens[i] < seq_len) ++i;
  const double f = std::log(seq_len / lens[i - 1]) / std::log(lens[i] / lens[i - 1]);
  return rate[i - 1] + f * (rate[i] - rate[i - 1]);
}

[[noreturn]] void Reject(const std::string& owner, const char* field, const char* rule,
                         double value) {
  std::ostringstream message;
  message.precision(17);
  message << owner << "." << field << " must be " << rule << " (got " << value << ")";
  throw std::invalid_argument(message.str());
}

}  // namespace

ComputeCost& ComputeCost::operator+=(const ComputeCost& other) {
  gemm_s += other.gemm_s;
  attention_s += other.attention_s;
  memory_s += other.memory_s;
  optimizer_s += other.optimizer_s;
  launch_s += other.launch_s;
  return *this;
}

ComputeCost ComputeCost::operator+(const ComputeCost& other) const {
  ComputeCost sum = *this;
  sum += other;
  return sum;
}

ComputeCost ComputeCost::operator*(double factor) const {
  return {gemm_s * factor, attention_s * factor, memory_s * factor, optimizer_s * factor,
          launch_s * factor};
}

double AttentionCall::ForwardFlops() const {
  const double full =
      2 * batch * heads * queries * keys * (head_dim + (value_dim > 0 ? value_dim : head_dim));
  return causal ? full / 2 : full;
}

double ComputeModel::Seconds(ComputeKind kind, double amount) const {
  switch (kind) {
    case ComputeKind::kMatmul:
      return amount / (peak_flops * utilization);
    case ComputeKind::kAttention:
      return amount /
             (peak_flops * (attention_utilization > 0 ? attention_utilization : utilization));
    case ComputeKind::kMemory:
      if (!(memory_bytes_per_s > 0)) {
        throw std::logic_error("ComputeModel: memory-bound work without a memory bandwidth");
      }
      return amount / memory_bytes_per_s;
  }
  return 0;
}

// The profile's time for a shape it holds. nbox's sizes are whole numbers wherever a trace
// could have measured them; a fractional one (an uneven split) is never in a profile.
std::optional<double> ComputeModel::Measured(const Gemm& g) const {
  if (!profile || !AllWhole({g.m, g.n, g.k, g.count})) return std::nullopt;
  return profile->Gemm(Whole(g.m), Whole(g.n), Whole(g.k), Whole(g.count));
}

// Flash attention's profile key has one head dimension: calls whose values differ (multi-head
// latent attention) are not looked up.
std::optional<double> ComputeModel::Measured(const AttentionCall& call, bool backward) const {
  const bool other_value_dim = call.value_dim > 0 && call.value_dim != call.head_dim;
  if (!profile || other_value_dim ||
      !AllWhole({call.batch, call.heads, call.queries, call.keys, call.head_dim})) {
    return std::nullopt;
  }
  return profile->Attention({Whole(call.batch), Whole(call.heads), Whole(call.queries),
                             Whole(call.keys), Whole(call.head_dim)},
                            backward);
}

double ComputeModel::AchievableFlops() const {
  return precision == Precision::kFp8 ? gpu->achievable_fp8_flops : gpu->achievable_bf16_flops;
}

ComputeModel ComputeModel::InBf16() const {
  ComputeModel bf16 = *this;
  bf16.precision = Precision::kBf16;
  return bf16;
}

ComputeCost ComputeModel::Gemms(const std::vector<Gemm>& gemms) const {
  ComputeCost cost;
  for (const Gemm& g : gemms) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.count <= 0) continue;
    if (mode == Mode::kUtil) {
      cost.gemm_s += Seconds(ComputeKind::kMatmul, g.flops());
      continue;
    }
    if (const auto measured = Measured(g)) {
      cost.gemm_s += *measured;
    } else {
      const double compute = g.flops() / (AchievableFlops() * RoundEfficiency(g, gpu->sms));
      const double bytes =
          g.count * ((g.m * g.k + g.k * g.n) * InputBytes(precision) + g.m * g.n * 2);
      cost.gemm_s += std::max(compute, bytes / gpu->memory_bytes_per_s);
    }
    cost.launch_s += kKernelOverheadS;
    if (precision == Precision::kFp8 && g.casts_input) {
      cost += MemoryBound(kFp8CastBytesPerElement * g.count * g.m * g.k, 1);
    }
  }
  return cost;
}

ComputeCost ComputeModel::Attention(const AttentionCall& call, bool backward) const {
  ComputeCost cost;
  if (call.queries <= 0 || call.keys <= 0) return cost;
  if (mode == Mode::kUtil) {
    // The full square, as Megatron counts attention's FLOPs.
    AttentionCall full = call;
    full.causal = false;
    cost.attention_s = Seconds(ComputeKind::kAttention, full.ForwardFlops());
    return cost;
  }
  if (call.flash) {
    if (const auto measured = Measured(call, backward)) {
      cost.attention_s = *measured;
      cost.launch_s = kKernelOverheadS;
      return cost;
    }
    // Without a measured kernel (b200), at the achievable BF16 matmul rate: attention's upper
    // bound. BF16 in FP8 training too, as below (FP8 recipes keep attention in BF16).
    const AttentionKernelRates* kernel = gpu->AttentionOf(attention_kernel);
    const double rate = kernel == nullptr ? gpu->achievable_bf16_flops
                                          : AttentionRate(*kernel, call.head_dim, call.queries,
                                                          call.causal, backward);
    cost.attention_s = (backward ? kFlashBackwardToForward : 1) * call.ForwardFlops() / rate;
    cost.launch_s = kKernelOverheadS;
    return cost;
  }
  // Scores (Q K^T per head) and context (P V per head); a backward takes each one's two
  // gradient products. The causal mask saves nothing here.
  const double heads = call.batch * call.heads;
  const Gemm scores{call.queries, call.keys, call.head_dim, heads};
  const Gemm context{call.queries, call.value_dim > 0 ? call.value_dim : call.head_dim, call.keys,
                     heads};
  std::vector<Gemm> products = {scores, context};
  if (backward) products = {scores, scores, context, context};
  const ComputeCost matmuls = InBf16().Gemms(products);  // attention stays in BF16
  cost.attention_s = matmuls.gemm_s;
  cost.launch_s = matmuls.launch_s;
  const double bytes_per_score =
      backward ? kUnfusedBackwardBytesPerScore : kUnfusedForwardBytesPerScore;
  cost += MemoryBound(heads * call.queries * call.keys * bytes_per_score, 2);
  return cost;
}

ComputeCost ComputeModel::MemoryBound(double bytes, int kernels) const {
  ComputeCost cost;
  if (mode == Mode::kUtil) {
    if (memory_bytes_per_s > 0) cost.memory_s = bytes / memory_bytes_per_s;
    return cost;
  }
  cost.memory_s = bytes / gpu->memory_bytes_per_s;
  cost.launch_s = kernels * kKernelOverheadS;
  return cost;
}

ComputeCost ComputeModel::Optimizer(double bytes, int kernels) const {
  const ComputeCost moved = MemoryBound(bytes, kernels);
  ComputeCost cost;
  cost.optimizer_s = moved.memory_s;
  cost.launch_s = moved.launch_s;
  return cost;
}

void ValidateComputeModel(const ComputeModel& model, const std::string& owner) {
  if (model.mode == ComputeModel::Mode::kModel) {
    if (model.gpu == nullptr) {
      throw std::invalid_argument(owner + ".gpu must name a GPU preset for per-operation timing");
    }
    if (!(model.AchievableFlops() > 0)) {
      throw std::invalid_argument(owner + ".gpu " + model.gpu->name + " has no " +
                                  std::string(ToString(model.precision)) + " tensor cores");
    }
    if (model.attention_kernel != AttentionKernel::kAuto &&
        model.gpu->AttentionOf(model.attention_kernel) == nullptr) {
      throw std::invalid_argument(owner + ".attention_kernel " +
                                  std::string(ToString(model.attention_kernel)) +
                                  " was not measured on the " + model.gpu->name +
                                  " (measured: " + model.gpu->AttentionKernelNames() + ")");
    }
    return;
  }
  if (!(std::isfinite(model.peak_flops) && model.peak_flops > 0)) {
    Reject(owner, "peak_flops", "finite and > 0", model.peak_flops);
  }
  if (!(model.utilization > 0 && model.utilization <= 1)) {
    Reject(owner, "utilization", "in (0, 1]", model.utilization);
  }
  if (!(model.attention_utilization >= 0 && model.attention_utilization <= 1)) {
    Reject(owner, "attention_utilization", "in [0, 1] (0 = utilization)",
           model.attention_utilization);
  }
  if (!(std::isfinite(model.memory_bytes_per_s) && model.memory_bytes_per_s >= 0)) {
    Reject(owner, "memory_bytes_per_s", "finite and >= 0 (0 = none)", model.memory_bytes_per_s);
  }
}

}  // namespace nbox::work
