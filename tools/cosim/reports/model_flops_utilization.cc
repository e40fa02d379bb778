#include "tools/cosim/reports/model_flops_utilization.h"

namespace nbox::cosim {

std::optional<ModelFlopsUtilization> SteadyModelFlopsUtilization(const RunResult& r) {
  const auto& details = r.workload_details;
  if (!details.is_object() || !details.contains("model_flops_per_iteration") ||
      !details.contains("gpu_peak_flops")) {
    return std::nullopt;
  }
  const double time = SteadyIterationTime(r.summary);
  const double peak = details["gpu_peak_flops"].get<double>();
  const int gpus = r.scenario.job.world_size;
  if (!(time > 0) || !(peak > 0) || gpus < 1) return std::nullopt;
  ModelFlopsUtilization mfu;
  mfu.flops_per_gpu_s = details["model_flops_per_iteration"].get<double>() / time / gpus;
  mfu.fraction = mfu.flops_per_gpu_s / peak;
  return mfu;
}

}  // namespace nbox::cosim
