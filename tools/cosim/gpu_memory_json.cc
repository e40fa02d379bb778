#include "tools/cosim/gpu_memory_json.h"

#include <vector>

#include "workloads/transformer_memory.h"

namespace nbox::cosim {
namespace {

using Json = nlohmann::ordered_json;

Json OrNull(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Whether every stage fits `gpu_memory` bytes: null when not checked (0), or when only the
// model states are known (MoE) and they fit, since the activations could still overflow it.
Json Fits(const std::vector<work::StageMemory>& stages, uint64_t gpu_memory) {
  if (gpu_memory == 0) return nullptr;
  const auto capacity = static_cast<double>(gpu_memory);
  bool known = true;
  for (const work::StageMemory& m : stages) {
    const double states = m.ModelStatesBytes();
    if (states > capacity || (m.activations_bytes && states + *m.activations_bytes > capacity)) {
      return false;
    }
    known = known && m.activations_bytes.has_value();
  }
  return known ? Json(true) : Json(nullptr);
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
                         {"activations_bytes", OrNull(m.activations_bytes)}});
  }
  return {{"source",
           "closed forms: ZeRO's model states, Korthikanti et al. 2022's layer activations, "
           "Megatron's embedding and logits activations (workloads/README.md, \"Memory per GPU\")"},
          {"activations", c.shape.IsMoe()
                              ? "not estimated: the layer formula does not cover expert layers"
                              : "estimated"},
          {"gpu_memory_bytes", gpu_memory > 0 ? Json(gpu_memory) : Json(nullptr)},
          {"fits", Fits(stages, gpu_memory)},
          {"stages", per_stage}};
}

}  // namespace nbox::cosim
