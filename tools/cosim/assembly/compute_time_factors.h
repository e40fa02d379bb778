// How long each emulated rank's compute takes against the workload's figure: a fleet's spread
// of GPU speeds ([events] gpu_variation) and stragglers (slow_gpus, slowdown).
#pragma once

#include <cstdint>
#include <vector>

#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// Per rank, the factor its compute time is multiplied by: 1 / speed, where each GPU's speed is
// drawn once, uniformly within 1 +- sqrt(3) x gpu_variation (so its standard deviation is
// gpu_variation), from `seed` alone (the same seed, the same fleet, on every platform), then
// times `slowdown` for the slow GPUs. Empty when every factor is 1.
std::vector<double> ComputeTimeFactors(const scenario::EventsSection& events, int world_size,
                                       uint64_t seed);

}  // namespace nbox::cosim
