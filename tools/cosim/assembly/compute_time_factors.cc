#include "tools/cosim/assembly/compute_time_factors.h"

#include <cmath>
#include <random>

namespace nbox::cosim {

std::vector<double> ComputeTimeFactors(const scenario::EventsSection& events, int world_size,
                                       uint64_t seed) {
  if (events.gpu_variation == 0 && events.slow_gpus.empty()) return {};
  std::vector<double> factors(static_cast<size_t>(world_size), 1.0);
  if (events.gpu_variation > 0) {
    // mt19937_64's sequence is fixed by the standard; the uniform draw is made here from its
    // top 53 bits rather than by a distribution, whose algorithm each library chooses.
    std::mt19937_64 draw(seed ^ 0x6770755f73706565ULL);  // "gpu_spee": its own stream
    const double half_width = std::sqrt(3.0) * events.gpu_variation;
    for (double& factor : factors) {
      const double unit = static_cast<double>(draw() >> 11) * 0x1.0p-53;  // [0, 1)
      factor = 1.0 / (1.0 - half_width + 2.0 * half_width * unit);
    }
  }
  for (int rank : events.slow_gpus) factors[static_cast<size_t>(rank)] *= events.slowdown;
  return factors;
}

}  // namespace nbox::cosim
