// Rank -> host placement.
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "topologies/topology.h"

namespace nbox::topo {

std::vector<int> PlaceRanks(const Topology& topology, int world_size, int ranks_per_host) {
  if (world_size < 1) {
    throw std::invalid_argument(
        fmt::format("PlaceRanks: world_size must be >= 1, got {}", world_size));
  }
  if (ranks_per_host < 1) {
    throw std::invalid_argument(
        fmt::format("PlaceRanks: ranks_per_host must be >= 1, got {}", ranks_per_host));
  }
  const int64_t capacity = static_cast<int64_t>(topology.hosts.size()) * ranks_per_host;
  if (world_size > capacity) {
    throw std::invalid_argument(
        fmt::format("PlaceRanks: world_size {} does not fit; expected at most {} ({} hosts x {} "
                    "ranks_per_host)",
                    world_size, capacity, topology.hosts.size(), ranks_per_host));
  }
  std::vector<int> host_of_rank(world_size);
  for (int rank = 0; rank < world_size; ++rank) host_of_rank[rank] = rank / ranks_per_host;
  return host_of_rank;
}

}  // namespace nbox::topo
