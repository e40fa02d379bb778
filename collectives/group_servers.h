// How a communicator's members sit on the job's servers, for rings and trees that keep to the
// rails (ring_order.h, tree.h) as NCCL's topology search builds them for every communicator.
//
// The job's ranks fill servers of G GPUs in order: world rank r is local GPU r % G of server
// r / G, and on a rail-optimised fabric local GPU i's NIC is on rail i. A group is regular on
// the servers when its members come server by server, the same number k on every server it
// touches, at the same local GPUs in the same order (Megatron's tensor, data, context and
// expert groups are, whenever their sizes divide G or are multiples of it). Its group rank
// r = s * k + j is then slot j of its s-th server, and slot j is the same local GPU, so the same
// rail, on every server: a spec with ranks_per_server = k makes every ring and tree hop between
// servers run between GPUs of one rail, never through a spine. A group that is not regular
// (members split unevenly, or at different GPUs on different servers) gets 0: its rings run in
// rank order.
#pragma once

#include <vector>

namespace nbox::coll {

// k for a group whose members (world ranks, in group-rank order) are regular on servers of
// `gpus_per_server` GPUs (k = the world's G for a group that fills whole servers, k < G for a
// group with part of every server, 1 for a group with one GPU on each server, whose every hop
// crosses servers on the members' one rail); 0 when they are not regular or there are no
// servers (gpus_per_server <= 0). O(members).
int GroupRanksPerServer(const std::vector<int>& members, int gpus_per_server);

// The same for the consecutive world ranks first .. first + count - 1, in O(1).
int ConsecutiveRanksPerServer(int first, int count, int gpus_per_server);

}  // namespace nbox::coll
