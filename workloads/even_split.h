// Spreading a whole-number quantity (parameters, FLOPs) evenly over layers.
#pragma once

#include <cstdint>
#include <vector>

namespace nbox::work {

// Splits `total` into `parts` whole shares that differ by at most one and add up to `total`
// exactly. The remainder goes one unit each to the first `total % parts` shares, so the
// split is deterministic. Throws std::invalid_argument if parts < 1.
std::vector<uint64_t> SplitEvenly(uint64_t total, int parts);

}  // namespace nbox::work
