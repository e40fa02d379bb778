#include "topologies/builder_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace nbox::topo::internal {

void CheckAtLeast(const char* function, const char* argument, int value, int minimum) {
  if (value < minimum) {
    throw std::invalid_argument(
        fmt::format("{}: {} must be >= {}, got {}", function, argument, minimum, value));
  }
}

void CheckRate(const char* function, const char* argument, double rate_bps) {
  if (!std::isfinite(rate_bps) || rate_bps <= 0) {
    throw std::invalid_argument(fmt::format("{}: {} must be a finite rate > 0 bits/s, got {}",
                                            function, argument, rate_bps));
  }
}

void CheckLatency(const char* function, const char* argument, double latency_s) {
  if (!std::isfinite(latency_s) || latency_s < 0) {
    throw std::invalid_argument(fmt::format("{}: {} must be a finite time >= 0 seconds, got {}",
                                            function, argument, latency_s));
  }
}

void CheckSize(const char* function, int64_t hosts, int64_t links) {
  constexpr int64_t kMaxHosts = std::numeric_limits<int>::max();
  constexpr int64_t kMaxLinks = std::numeric_limits<uint32_t>::max();
  if (hosts > kMaxHosts || links > kMaxLinks) {
    throw std::invalid_argument(fmt::format(
        "{}: the arguments give {} hosts and {} links; expected at most {} hosts and {} links",
        function, hosts, links, kMaxHosts, kMaxLinks));
  }
}

std::string Indexed(const char* prefix, int64_t i) {
  return fmt::format("{}{}", prefix, i);
}

}  // namespace nbox::topo::internal
