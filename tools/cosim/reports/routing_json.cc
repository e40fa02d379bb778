#include "tools/cosim/reports/routing_json.h"

#include <algorithm>

#include "workloads/moe_routing.h"
#include "workloads/transformer_program.h"

namespace nbox::cosim {

nlohmann::ordered_json RoutingJson(const work::TransformerConfig& c) {
  const work::MoeRouting routing = work::ExpertRoutingOf(c);
  double assignments = 0;
  double dropped = 0;
  double padding = 0;
  double worst_layer = 0;
  for (int it = 0; it < c.iterations; ++it) {
    for (int layer = 0; layer < c.shape.layers; ++layer) {
      if (!c.shape.IsMoeLayer(layer)) continue;
      const work::CapacityEffect effect = work::CapacityEffectOf(routing, it, layer);
      const auto all = static_cast<double>(effect.assignments);
      assignments += all;
      dropped += static_cast<double>(effect.dropped);
      padding += static_cast<double>(effect.padding);
      worst_layer = std::max(worst_layer, static_cast<double>(effect.dropped) / all);
    }
  }
  return {{"skew", c.routing_skew},
          {"expert_capacity_factor", c.expert_capacity_factor},
          {"pad_to_capacity", c.pad_to_capacity},
          {"expert_capacity", work::ExpertCapacity(routing)},
          {"dropped_fraction", dropped / assignments},
          {"worst_layer_dropped_fraction", worst_layer},
          {"padding_fraction", padding / assignments}};
}

}  // namespace nbox::cosim
