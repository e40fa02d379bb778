// The [workload] keys of workload.kind = nccl-tests: which collective nccl-tests' sweep runs,
// over which sizes (workloads/nccl_tests.h).
#pragma once

#include <vector>

#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

std::vector<KeySpec> NcclTestsKeys();

}  // namespace nbox::scenario
