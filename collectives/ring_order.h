// The order in which a channel's ring visits the ranks.
//
// Without servers (spec.ranks_per_server == 0) every channel's ring is 0 -> 1 -> ... -> W-1.
// With servers of G ranks of the group (group rank r = slot r % G of the group's server r / G;
// slot j the same GPU, so the same rail, on every server: group_servers.h), the ring visits each
// server's ranks consecutively, so every hop inside a server is an NVLink hop, and crosses
// from server s to server s+1 (and from the last back to server 0) between GPUs of the same
// local index, so a rail-optimised fabric carries each crossing on one rail and never through
// a spine (NCCL's rail-aligned rings).
//
// Server s is entered at local index e(s) and left at x(s) = e(s+1); in between the ring
// visits the server's other GPUs in ascending local index from e(s)+1 (cyclically). That
// needs e(s) != e(s+1) for every s, a closed walk of length S over the G local indices:
//   S even:                e(s) = s mod 2 (0, 1, 0, 1, ...);
//   S odd, G >= 3:         0, 1, 0, 1, ..., 0, 1, 2;
//   S odd, G == 2:         impossible; instead the ring goes out on one local index and comes
//                          back on the other: (0, a), (1, a), ..., (S-1, a), (S-1, b), ...,
//                          (0, b), a = channel mod 2, b = 1 - a. Every crossing stays on one
//                          rail (2(S-1) of them, two NVLink hops at the ends), each server's
//                          two ranks are no longer consecutive;
//   S == 1 or G == 1:      the plain order (a single server's ring closes over NVLink).
// Channel c adds c * u (mod G) to every local index, u being the number of local indices the
// walk uses (2, or 3 for odd S), so up to G / u channels cross on disjoint rails. A channel
// leaves server s from one GPU's NIC and enters s + 1 at another's: on a server it uses one
// direction of two NICs. The channels of the next lap round the local indices
// (floor(c * u / G) odd) run the ring the other way, on the directions the first lap left
// free, so G / u x 2 channels use every NIC of the group both ways, as NCCL's rings (each
// entering and leaving a server through one NIC) do.
#pragma once

#include "collectives/schedule.h"

namespace nbox::coll {

class RingOrder {
 public:
  // `spec` must be valid (ValidateSpec) and 0 <= channel < spec.channels. O(1).
  RingOrder(const CollectiveSpec& spec, int channel);

  // The rank at ring position `position` (taken modulo world size; negative allowed).
  int RankAt(int position) const;
  int PositionOf(int rank) const;
  int Next(int rank) const { return RankAt(PositionOf(rank) + 1); }
  int Previous(int rank) const { return RankAt(PositionOf(rank) - 1); }

 private:
  int Entry(int server) const;  // local index the ring enters `server` at
  int Exit(int server) const;   // local index it leaves `server` from

  int world_;
  int gpus_;     // ranks per server (world_ when there are no servers)
  int servers_;  // world_ / gpus_
  int offset_;   // channel's shift of every local index
  // S odd and G == 2: out on local index out_, back on the other (see above).
  bool out_and_back_;
  int out_;
  bool reversed_;  // this channel's ring runs the other way (a second lap, see above)
  // One server, or one rank per server: the ring is 0 -> 1 -> ... -> W-1 (every ring step
  // of a flat ring asks RankAt for its peers and segments, so this skips the servers' walk).
  bool plain_;
};

}  // namespace nbox::coll
