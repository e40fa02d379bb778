// A region of a rank's buffer as the schedule builders see it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nbox::coll {

// `index` names the region densely (0..region_count-1) so per-region bookkeeping is a vector.
// Two regions of one layout are either the same region or disjoint.
struct Region {
  size_t index = 0;
  uint64_t offset = 0;  // bytes
  uint64_t bytes = 0;
};

}  // namespace nbox::coll
