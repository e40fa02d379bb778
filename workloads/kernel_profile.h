// Kernel times measured on a real GPU, read from a PyTorch profiler trace of a training step
// (Kineto's Chrome-trace JSON), for `compute = profile` (workloads/README.md, "Measured
// kernels"): a user who profiled a small run simulates the large one with their own kernels.
//
// From the trace's CPU operators with their input shapes (record_shapes=True), it keeps the
// GEMMs (aten::mm, addmm, bmm, baddbmm) by (m, n, k, batch) and the flash attention calls
// (aten::_scaled_dot_product_flash_attention and its backward) by (batch, heads, queries,
// keys, head dimension). An operator's time is that of the GPU kernels it launched (the
// trace's kernel events with the operator's "External id"), or, in a trace without GPU
// kernels, the operator's own duration on the CPU. A shape met several times takes the median.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace nbox::work {

struct KernelProfile {
  using GemmShape = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;  // m, n, k, batch
  // batch, heads, queries, keys, head dimension
  using AttentionShape = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;

  std::string path;
  bool gpu_times = false;  // kernel times on the GPU, else operators' times on the CPU
  std::map<GemmShape, double> gemm_s;
  std::map<AttentionShape, double> attention_forward_s;
  std::map<AttentionShape, double> attention_backward_s;

  // Seconds of one GEMM of that shape or its transpose (n x k times k x m): measured as it is,
  // or `batch` times an unbatched one.
  std::optional<double> Gemm(uint64_t m, uint64_t n, uint64_t k, uint64_t batch) const;
  std::optional<double> Attention(const AttentionShape& shape, bool backward) const;
};

// Throws std::invalid_argument naming `path` and what is wrong (not JSON, no traceEvents, an
// operator without shapes, no GEMM or attention at all).
KernelProfile ReadKernelProfile(const std::string& path);

}  // namespace nbox::work
