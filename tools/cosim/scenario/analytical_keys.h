// The [analytical] section's keys: the analytical network model's per-operation
// effective-bandwidth factors (network.model = analytical).
#pragma once

#include <vector>

#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

std::vector<KeySpec> AnalyticalKeys();

}  // namespace nbox::scenario
