// Hierarchical all-reduce over servers of G ranks (spec.ranks_per_server), S = W / G servers,
// rank r = local GPU l = r % G of server s = r / G:
//   1. reduce-scatter inside the server: a ring l -> l+1 over the NVSwitch; afterwards local
//      GPU l holds the server's sum of intra-server segment l;
//   2. all-reduce of segment l across servers among the GPUs of local index l (a ring
//      s -> s+1 over rail l): reduce-scatter, then all-gather, of its S sub-segments;
//   3. all-gather inside the server: every GPU gets every segment l.
// Each channel does this on its own contiguous slice of the buffer. The slice is cut into
// W cells, cell (l, m) = segment l * S + m (RankSegment's cut of the slice): sub-segment m of
// intra-server segment l. Phases 1 and 3 move a segment as its S cells; every cell is cut
// into chunks of at most chunk_bytes. All regions are thus chunks of cells, so the data
// hazards alone (RankScheduleBuilder) order the phases per chunk: a chunk goes across servers
// as soon as its intra-server sum is complete, and phases pipeline.
//
// Per rank, with B bytes: phase 1 sends (G-1)/G B, phase 2 sends 2(S-1)/S B/G, phase 3
// (G-1)/G B (up to rounding of the cuts). Only phase 2 leaves the server.
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

// One rank's schedule for spec.algorithm == kHierarchical (op kAllReduce, ranks_per_server
// > 0); `spec` must be valid and rank in range.
RankSchedule BuildHierarchicalRankSchedule(const CollectiveSpec& spec, int rank);

// The most steps BuildHierarchicalRankSchedule(spec, r) has for any rank r, without building
// it.
uint64_t HierarchicalStepBound(const CollectiveSpec& spec);

}  // namespace nbox::coll
