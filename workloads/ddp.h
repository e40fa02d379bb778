// Data-parallel training (PyTorch DDP): forward, backward with gradient buckets all-reduced
// as soon as their layers' gradients are ready, then the optimizer step.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/program.h"

namespace nbox::work {

struct ModelSpec {
  std::string name;
  uint64_t parameters = 0;               // published parameter count
  int layers = 0;                        // parameters and FLOPs are spread evenly over these
  double forward_flops_per_sample = 0;   // FLOPs (not multiply-adds) of one forward pass
  uint32_t gradient_bytes_per_param = 4; // fp32 gradients
  std::string source;                    // where the numbers come from
};

// Presets: published models. Returns nullptr for an unknown name.
const ModelSpec* FindModelPreset(std::string_view name);
std::vector<std::string> ModelPresetNames();

struct DdpConfig {
  ModelSpec model;
  int batch_per_rank = 32;
  double gpu_peak_flops = 125e12;
  double gpu_utilization = 0.4;       // achieved fraction of peak
  double backward_to_forward = 2.0;   // backward FLOPs per forward FLOP
  uint64_t bucket_bytes = 25ull << 20; // PyTorch's bucket_cap_mb = 25 (MiB)
  double optimizer_s = 0;             // optimizer step after the gradients are reduced
  int iterations = 3;
};

// The same program for every rank. Throws std::invalid_argument on a bad config.
RankProgram MakeDdpProgram(const DdpConfig& config);

}  // namespace nbox::work
