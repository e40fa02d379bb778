// Where a mixture-of-experts layer's tokens go: the all-to-all-v sizes between the ranks of an
// expert-parallel group (workloads/README.md, "MoE routing").
//
// Expert popularity is either balanced (every expert gets tokens x top_k / experts) or skewed:
// Zipf-like weights 1 / rank^skew over the experts, in an order drawn afresh for every
// (iteration, layer) from the job's seed, so the hot experts, and with them the traffic,
// change between iterations as measured in real MoE training. Every rank of the group routes
// its tokens by the same popularity (no per-token sampling noise); an expert receives at most
// one copy of each token (top_k distinct experts), so popularity beyond 1 / top_k is capped
// and its excess spread over the others by weight. Counts are whole tokens, rounded by largest
// remainder so that each rank's add up to tokens x top_k exactly.
//
// With an expert capacity (GShard's and Switch Transformer's capacity factor C; Megatron-core's
// moe_expert_capacity_factor) each expert takes at most ceil(C x tokens x top_k / experts) of a
// rank's assignments and the rest are dropped (they skip the expert, through the residual);
// padded, every expert receives exactly that many (moe_pad_expert_input_to_capacity).
#pragma once

#include <cstdint>
#include <vector>

namespace nbox::work {

struct MoeRouting {
  int experts = 8;
  int top_k = 2;
  int group = 1;                 // ranks in the expert-parallel group; divides experts
  uint64_t tokens_per_rank = 0;  // tokens each rank routes
  double skew = 0;               // 0 = balanced; > 0 = Zipf exponent of popularity
  uint64_t seed = 1;
  double capacity_factor = 0;    // 0 = no capacity (dropless); > 0: C
  bool pad_to_capacity = false;  // every expert receives its capacity (needs C > 0)
};

// The most assignments of one rank an expert takes: ceil(C tokens top_k / experts), at most
// one copy of each token; 0 = no capacity.
uint64_t ExpertCapacity(const MoeRouting& routing);

// Tokens (expert assignments) each expert receives from one rank in (iteration, layer), after
// the capacity.
std::vector<uint64_t> TokensPerExpert(const MoeRouting& routing, int iteration, int layer);

// What the capacity does to one rank's assignments in (iteration, layer): how many it drops
// (past an expert's capacity) and how many empty slots padding adds (pad_to_capacity). Both 0
// without a capacity.
struct CapacityEffect {
  uint64_t assignments = 0;  // tokens_per_rank x top_k
  uint64_t dropped = 0;
  uint64_t padding = 0;
};
CapacityEffect CapacityEffectOf(const MoeRouting& routing, int iteration, int layer);

// group x group counts, row-major by sender: tokens rank i sends to the experts of rank j
// (rank j holds experts j * experts/group .. (j + 1) * experts/group - 1).
std::vector<uint64_t> RouteTokens(const MoeRouting& routing, int iteration, int layer);

}  // namespace nbox::work
