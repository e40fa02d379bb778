#include "tools/cosim/reports/gpu_memory_json.h"

#include <vector>

#include "workloads/transformer_memory.h"

namespace nbox::cosim {
namespace {

using Json = nlohmann::ordered_json;

// Whether every stage fits `gpu_memory` bytes: null when not checked (0).
Json Fits(const std::vector<work::StageMemory>& stages, uint64_t gpu_memory) {
  if (gpu_memory == 0) return nullptr;
  const auto capacity = static_cast<double>(gpu_memory);
  for (const work::StageMemory& m : stages) {
    if (m.ModelStatesBytes() + m.activations_bytes > capacity) return false;
  }
  return true;
}

}  // namespace

Json GpuMemoryJson(const work::TransformerConfig& c, uint64_t gpu_memory) {
  const std::vector<work::StageMemory> stages = work::EstimateStageMemory(c);
  Json per_stage = Json::array();
  for (const work::StageMemory& m : stages) {
    per_stage.push_back({{"stage", m.stage},
                         {"parameters", m.parameters},
                         {"weights_bytes", m.weights_bytes},
                         {"gradients_bytes", m.gradients_bytes},
                         {"optimizer_bytes", m.optimizer_bytes},
                         {"layers_in_flight", m.layers_in_flight},
                         {"embedding_activations_bytes", m.embedding_activations_bytes},
                         {"output_activations_bytes", m.output_activations_bytes},
                         {"activations_bytes", m.activations_bytes}});
  }
  return {{"source",
           "closed forms: ZeRO's model states, Korthikanti et al. 2022's layer activations, "
           "Megatron's embedding and logits activations, nbox's count of an expert layer's "
           "(workloads/README.md, \"Memory per GPU\")"},
          {"gpu_memory_bytes", gpu_memory > 0 ? Json(gpu_memory) : Json(nullptr)},
          {"fits", Fits(stages, gpu_memory)},
          {"stages", per_stage}};
}

}  // namespace nbox::cosim
