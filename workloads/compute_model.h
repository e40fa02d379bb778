// How long a GPU takes for a piece of work, shared by every workload: FLOPs at an achieved
// fraction of the GPU's peak, or bytes at its memory bandwidth for memory-bound work
// (embedding lookups). workloads/README.md ("Compute") says where the numbers come from.
#pragma once

#include <string>

namespace nbox::work {

enum class ComputeKind {
  kMatmul,     // dense GEMMs: linear layers, MLPs, logits, experts
  kAttention,  // attention's score and value products
  kMemory,     // memory-bound work, timed by bytes moved (embedding lookups and updates)
};

struct ComputeModel {
  double peak_flops = 125e12;        // FLOP/s of one GPU at its training precision
  double utilization = 0.4;          // achieved fraction of the peak for matmuls, in (0, 1]
  double attention_utilization = 0;  // the same for attention; 0 = `utilization`
  double memory_bytes_per_s = 0;     // memory bandwidth for kMemory; 0 = none given

  // Seconds for `amount` of work of `kind`: FLOPs for kMatmul and kAttention, bytes for
  // kMemory. Throws std::logic_error for kMemory without a memory bandwidth.
  double Seconds(ComputeKind kind, double amount) const;
};

// Throws std::invalid_argument naming "<owner>.<field>", the rule and the value.
void ValidateComputeModel(const ComputeModel& model, const std::string& owner);

}  // namespace nbox::work
