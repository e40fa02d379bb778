// The [workload] keys of workload.kind = dlrm: the recommendation model's shape and
// the GPU memory bandwidth its embedding lookups need (workloads/dlrm.h).
#pragma once

#include <vector>

#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

std::vector<KeySpec> DlrmKeys();

}  // namespace nbox::scenario
