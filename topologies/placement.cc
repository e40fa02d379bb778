// Rank -> host placement.
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include "topologies/topology.h"

namespace nbox::topo {

namespace {

void CheckFits(const Topology& topology, int world_size, int ranks_per_host) {
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
}

// The hosts not `taken` by an earlier job, in host order; throws when fewer than world_size.
std::vector<int> FreeHosts(const Topology& topology, int world_size,
                           const std::vector<bool>& taken) {
  CheckFits(topology, world_size, 1);
  if (!taken.empty() && taken.size() != topology.hosts.size()) {
    throw std::invalid_argument(fmt::format("placement: {} hosts marked taken of a topology of {}",
                                            taken.size(), topology.hosts.size()));
  }
  std::vector<int> free;
  for (size_t host = 0; host < topology.hosts.size(); ++host) {
    if (taken.empty() || !taken[host]) free.push_back(static_cast<int>(host));
  }
  if (free.size() < static_cast<size_t>(world_size)) {
    throw std::invalid_argument(
        fmt::format("world_size {} does not fit: {} of the topology's {} hosts are free, the "
                    "others taken by earlier jobs",
                    world_size, free.size(), topology.hosts.size()));
  }
  return free;
}

// A draw uniform on [0, bound) from `engine`'s 64-bit outputs: the remainder of an output
// below the largest multiple of `bound`, so no value is favoured.
uint64_t UniformBelow(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - max % bound;
  uint64_t draw = engine();
  while (draw >= limit) draw = engine();
  return draw % bound;
}

}  // namespace

std::vector<std::string> HostNames(const Topology& topology) {
  std::vector<std::string> names;
  names.reserve(topology.hosts.size());
  for (const Vertex host : topology.hosts) names.push_back(topology.graph[host].name);
  return names;
}

std::vector<int> PlaceRanks(const Topology& topology, int world_size, int ranks_per_host) {
  CheckFits(topology, world_size, ranks_per_host);
  std::vector<int> host_of_rank(world_size);
  for (int rank = 0; rank < world_size; ++rank) host_of_rank[rank] = rank / ranks_per_host;
  return host_of_rank;
}

std::vector<int> PackedRanks(const Topology& topology, int world_size,
                             const std::vector<bool>& taken) {
  std::vector<int> hosts = FreeHosts(topology, world_size, taken);
  hosts.resize(static_cast<size_t>(world_size));
  return hosts;
}

std::vector<int> SpreadRanks(const Topology& topology, int world_size,
                             const std::vector<bool>& taken) {
  std::vector<Vertex> switches;                    // in the order their first host appears
  std::map<Vertex, std::vector<int>> hosts_under;  // switch -> its free hosts, in order
  for (const int host : FreeHosts(topology, world_size, taken)) {
    const Vertex vertex = topology.hosts[static_cast<size_t>(host)];
    const auto [edge, end] = boost::out_edges(vertex, topology.graph);
    const Vertex below = edge == end ? vertex : boost::target(*edge, topology.graph);
    auto [it, added] = hosts_under.try_emplace(below);
    if (added) switches.push_back(below);
    it->second.push_back(host);
  }
  std::vector<int> host_of_rank;
  std::vector<size_t> next(switches.size(), 0);
  while (host_of_rank.size() < static_cast<size_t>(world_size)) {
    for (size_t i = 0; i < switches.size() && host_of_rank.size() < static_cast<size_t>(world_size);
         ++i) {
      const std::vector<int>& hosts = hosts_under[switches[i]];
      if (next[i] < hosts.size()) host_of_rank.push_back(hosts[next[i]++]);
    }
  }
  return host_of_rank;
}

std::vector<int> ShuffledRanks(const Topology& topology, int world_size, uint64_t seed,
                               const std::vector<bool>& taken) {
  std::vector<int> hosts = FreeHosts(topology, world_size, taken);
  std::mt19937_64 engine(seed ^ 0x706c6163656d6e74ULL);  // "placemnt": its own stream
  for (size_t i = hosts.size(); i > 1; --i) {
    std::swap(hosts[i - 1], hosts[UniformBelow(engine, i)]);
  }
  hosts.resize(static_cast<size_t>(world_size));
  return hosts;
}

}  // namespace nbox::topo
