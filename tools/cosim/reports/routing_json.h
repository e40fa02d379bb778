// results.json's workload.routing: how an MoE job routes its tokens (workloads/moe_routing.h)
// and what the expert capacity does to them over the whole job.
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/transformer.h"

namespace nbox::cosim {

// The routing keys, the capacity (assignments of one rank an expert takes per micro-batch, 0 =
// dropless) and the fractions of all assignments the capacity dropped and padding added, over
// every (iteration, layer), with the layer that dropped the most. Every rank routes alike, so
// the fractions are every rank's.
nlohmann::ordered_json RoutingJson(const work::TransformerConfig& config);

}  // namespace nbox::cosim
