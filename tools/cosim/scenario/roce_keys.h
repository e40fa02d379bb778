// The [roce] section's keys: the RoCEv2 fabric used when network.transport = roce.
#pragma once

#include <vector>

#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

// Every [roce] key, with its meaning and the source of its default.
std::vector<KeySpec> RoceKeys();

}  // namespace nbox::scenario
