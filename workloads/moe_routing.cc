#include "workloads/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace nbox::work {
namespace {

// Popularity of each expert in (iteration, layer), summing to 1.
std::vector<double> Popularity(const MoeRouting& r, int iteration, int layer) {
  const auto n = static_cast<size_t>(r.experts);
  std::vector<double> weight(n, 1.0);
  if (r.skew > 0) {
    // Fisher-Yates with our own index draw: the permutation must not depend on the standard
    // library (std::shuffle's algorithm is unspecified), so a seed gives the same run anywhere.
    std::mt19937_64 rng(r.seed ^ (0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(iteration) + 1)) ^
                        (0xBF58476D1CE4E5B9ull * (static_cast<uint64_t>(layer) + 1)));
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    for (size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
    for (size_t rank = 0; rank < n; ++rank) {
      weight[order[rank]] = 1.0 / std::pow(static_cast<double>(rank + 1), r.skew);
    }
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (double& w : weight) w /= total;
  // Cap at one copy of every token per expert (water filling).
  const double cap = 1.0 / r.top_k;
  for (bool changed = true; changed;) {
    changed = false;
    double excess = 0;
    double free_weight = 0;
    for (double w : weight) {
      if (w > cap) excess += w - cap;
      if (w < cap) free_weight += w;
    }
    if (excess <= 1e-15 || free_weight <= 0) break;
    for (double& w : weight) {
      if (w > cap) {
        w = cap;
        changed = true;
      } else if (w < cap) {
        w += excess * w / free_weight;
      }
    }
  }
  return weight;
}

// Assignments of one rank each expert gets in (iteration, layer), before the capacity.
std::vector<uint64_t> AssignmentsPerExpert(const MoeRouting& r, int iteration, int layer) {
  if (r.experts < 1 || r.top_k < 1 || r.top_k > r.experts) {
    throw std::invalid_argument("MoeRouting: top_k " + std::to_string(r.top_k) +
                                " must be in 1..experts (" + std::to_string(r.experts) + ")");
  }
  const std::vector<double> weight = Popularity(r, iteration, layer);
  const uint64_t assignments = r.tokens_per_rank * static_cast<uint64_t>(r.top_k);
  std::vector<uint64_t> count(weight.size());
  std::vector<std::pair<double, size_t>> remainder;
  uint64_t given = 0;
  for (size_t x = 0; x < weight.size(); ++x) {
    const double exact = weight[x] * static_cast<double>(assignments);
    count[x] = std::min<uint64_t>(static_cast<uint64_t>(std::floor(exact)), r.tokens_per_rank);
    given += count[x];
    remainder.push_back({exact - std::floor(exact), x});
  }
  // Largest remainder first, ties by expert index, never past one copy per token.
  std::sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (size_t i = 0; given < assignments; i = (i + 1) % remainder.size()) {
    const size_t x = remainder[i].second;
    if (count[x] < r.tokens_per_rank) {
      ++count[x];
      ++given;
    }
  }
  return count;
}

}  // namespace

std::vector<uint64_t> TokensPerExpert(const MoeRouting& r, int iteration, int layer) {
  std::vector<uint64_t> count = AssignmentsPerExpert(r, iteration, layer);
  if (const uint64_t capacity = ExpertCapacity(r); capacity > 0) {
    for (uint64_t& n : count) n = r.pad_to_capacity ? capacity : std::min(n, capacity);
  }
  return count;
}

CapacityEffect CapacityEffectOf(const MoeRouting& r, int iteration, int layer) {
  const std::vector<uint64_t> assigned = AssignmentsPerExpert(r, iteration, layer);
  CapacityEffect effect;
  effect.assignments = r.tokens_per_rank * static_cast<uint64_t>(r.top_k);
  const uint64_t capacity = ExpertCapacity(r);
  if (capacity == 0) return effect;
  for (uint64_t n : assigned) {
    if (n > capacity) effect.dropped += n - capacity;
    if (r.pad_to_capacity && n < capacity) effect.padding += capacity - n;
  }
  return effect;
}

uint64_t ExpertCapacity(const MoeRouting& r) {
  if (!(r.capacity_factor >= 0) || (r.pad_to_capacity && r.capacity_factor == 0)) {
    throw std::invalid_argument("MoeRouting: capacity_factor " + std::to_string(r.capacity_factor) +
                                " must be >= 0, and > 0 to pad to it");
  }
  if (r.capacity_factor == 0) return 0;
  const double exact = r.capacity_factor * static_cast<double>(r.tokens_per_rank) * r.top_k /
                       static_cast<double>(r.experts);
  // ceil of a product of whole numbers and C: a whole value must not round up by its error.
  const auto capacity = static_cast<uint64_t>(std::ceil(exact - 1e-9));
  return std::min(capacity, r.tokens_per_rank);
}

std::vector<uint64_t> RouteTokens(const MoeRouting& r, int iteration, int layer) {
  if (r.group < 1 || r.experts % r.group != 0) {
    throw std::invalid_argument("MoeRouting: group " + std::to_string(r.group) +
                                " must divide experts (" + std::to_string(r.experts) + ")");
  }
  const std::vector<uint64_t> per_expert = TokensPerExpert(r, iteration, layer);
  const int per_rank = r.experts / r.group;
  const auto g = static_cast<size_t>(r.group);
  std::vector<uint64_t> counts(g * g, 0);
  for (size_t src = 0; src < g; ++src) {
    for (size_t x = 0; x < per_expert.size(); ++x) {
      counts[src * g + x / static_cast<size_t>(per_rank)] += per_expert[x];
    }
  }
  return counts;
}

}  // namespace nbox::work
