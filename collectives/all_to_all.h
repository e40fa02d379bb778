// All-to-all, uniform (CollectiveOp::kAllToAll) and with a size per pair of ranks
// (kAllToAllV), in the direct algorithm NCCL uses: every rank sends block d of its send
// buffer to rank d and receives rank s's block for it into block s of its receive buffer, to
// and from every peer at once (ncclGroupStart, a ncclSend and a ncclRecv per peer,
// ncclGroupEnd). A rank's own block is a local copy and moves no message.
//
// Layout: the rank's buffer is its send buffer followed by its receive buffer. Each block is
// cut into `channels` contiguous slices, each slice into chunks of at most chunk_bytes (whole
// elements). No step depends on another: the regions are all distinct. In step order, peers
// are visited as NCCL's p2p scheduler does, round k sending to rank + k and receiving from
// rank - k, so the message of each connection is posted once, in a fixed order.
#pragma once

#include <cstdint>

#include "collectives/schedule.h"

namespace nbox::coll {

// Bytes rank `src` sends to rank `dst` (0 <= src, dst < world_size): for kAllToAll the
// segment `dst` of src's `bytes`-byte send buffer (RankSegment's cut), for kAllToAllV
// counts[src * world_size + dst].
uint64_t AllToAllBytes(const CollectiveSpec& spec, int src, int dst);

// What rank `rank` sends to every other rank in all (its own block excluded).
uint64_t AllToAllBytesSent(const CollectiveSpec& spec, int rank);

RankSchedule BuildDirectAllToAllRankSchedule(const CollectiveSpec& spec, int rank);

// The steps rank `rank`'s all-to-all schedule has (spec.algorithm's: kDirect or
// kHierarchical), counted without building it in O(world_size): a Send per chunk it sends, a
// Recv per chunk it receives, and, hierarchical, a Recv and a Send per chunk it relays. What
// each builder checks against kMaxStepsPerRank, and what a run's memory estimate counts for
// the rank: an all-to-all-v's rows differ, so no bound on every rank would do.
uint64_t AllToAllStepCount(const CollectiveSpec& spec, int rank);

// Hierarchical all-to-all over servers of G = ranks_per_server ranks (rank r is local index
// r % G of server r / G): a block from (server a, local i) to (server b, local j) goes
// directly when a = b (inside the server) or i = j (on rail i), and otherwise in two hops, first
// inside server a to its GPU of local index j, which forwards it on rail j (NCCL's PXN, and the
// two-level all-to-all of the DLRM studies): the fabric then only carries rail-aligned traffic,
// S - 1 peers per rank instead of W - 1. Every rank lists every block's hops in one global
// order (sender-major), so the two ends of each connection agree on its messages; a forwarded
// piece waits for its first hop (same region). The buffer is the send buffer, the receive
// buffer, then the forwarded pieces the rank relays.
RankSchedule BuildHierarchicalAllToAllRankSchedule(const CollectiveSpec& spec, int rank);

// Where the bytes that land at `offset` of rank `rank`'s schedule buffer (spec.algorithm's
// layout) were first sent from: the byte offset in their sender's send buffer (a receive block
// from src: src's block for `rank`; a piece `rank` relays from src to dst: src's block for
// dst). What a real rank fills a message from an emulated peer with (bridge/host). Throws
// std::invalid_argument for an offset in the rank's own send buffer or past its buffer.
uint64_t AllToAllSenderOffset(const CollectiveSpec& spec, int rank, uint64_t offset);

}  // namespace nbox::coll
