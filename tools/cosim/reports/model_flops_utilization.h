// Model FLOPs utilization (MFU, Chowdhery et al. 2022, PaLM, Appendix B): the model FLOPs of an
// iteration over what the job's GPUs could do at their peak in its steady time, for workloads
// that state their model FLOPs (transformer and moe: workload.model_flops_per_iteration).
#pragma once

#include <optional>

#include "tools/cosim/reports/run_result.h"

namespace nbox::cosim {

struct ModelFlopsUtilization {
  double fraction = 0;         // of the GPUs' peak
  double flops_per_gpu_s = 0;  // model FLOP/s per GPU
};

// Empty when the workload states no model FLOPs or peak, or no iteration ran.
std::optional<ModelFlopsUtilization> SteadyModelFlopsUtilization(const RunResult& result);

}  // namespace nbox::cosim
