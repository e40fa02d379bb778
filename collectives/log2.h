// Integer base-2 logarithms, as NCCL's cost models round them (its log2i is Log2Floor).
#pragma once

#include <cstdint>

namespace nbox::coll {

// floor(log2(value)) for value >= 1, and 0 for 0.
constexpr int Log2Floor(uint64_t value) {
  int log = 0;
  while (value >>= 1) ++log;
  return log;
}

// ceil(log2(value)) for value >= 1, and 0 for 0.
constexpr int Log2Ceil(uint64_t value) {
  int log = 0;
  while ((uint64_t{1} << log) < value) ++log;
  return log;
}

static_assert(Log2Floor(1) == 0 && Log2Floor(7) == 2 && Log2Floor(8) == 3);
static_assert(Log2Ceil(1) == 0 && Log2Ceil(7) == 3 && Log2Ceil(8) == 3);

}  // namespace nbox::coll
