// The [workload] keys of workload.kind = transformer and moe: the model's shape, its
// parallelism and how it trains (workloads/transformer.h).
#pragma once

#include <vector>

#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

std::vector<KeySpec> TransformerKeys();

}  // namespace nbox::scenario
