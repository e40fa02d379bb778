#include "workloads/even_split.h"

#include <stdexcept>
#include <string>

namespace nbox::work {

std::vector<uint64_t> SplitEvenly(uint64_t total, int parts) {
  if (parts < 1) {
    throw std::invalid_argument("SplitEvenly: parts must be >= 1 (got " + std::to_string(parts) +
                                ")");
  }
  const auto count = static_cast<uint64_t>(parts);
  const uint64_t base = total / count;
  const uint64_t remainder = total % count;
  std::vector<uint64_t> shares(count, base);
  for (uint64_t i = 0; i < remainder; ++i) ++shares[i];
  return shares;
}

}  // namespace nbox::work
