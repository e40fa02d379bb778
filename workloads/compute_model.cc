#include "workloads/compute_model.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace nbox::work {
namespace {

[[noreturn]] void Reject(const std::string& owner, const char* field, const char* rule,
                         double value) {
  std::ostringstream message;
  message.precision(17);
  message << owner << "." << field << " must be " << rule << " (got " << value << ")";
  throw std::invalid_argument(message.str());
}

}  // namespace

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

void ValidateComputeModel(const ComputeModel& model, const std::string& owner) {
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
