// results.json's workload.memory_per_gpu_estimate: the per-GPU memory estimate of a transformer
// job (workloads/transformer_memory.h), every stage's, and whether it fits a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "workloads/transformer.h"

namespace nbox::cosim {

// `gpu_memory` = bytes of one GPU (workload.gpu_memory), 0 = not checked.
nlohmann::ordered_json GpuMemoryJson(const work::TransformerConfig& config, uint64_t gpu_memory);

}  // namespace nbox::cosim
