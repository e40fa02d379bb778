// Routes and host reachability over the links that have not failed (a cluster's events take
// links down during a run; the routes are recomputed as the fabric's routing would).
#include <algorithm>

#include "topologies/connectivity.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

// The same vertices (indices, names, kinds) and hosts, with every link but the failed ones;
// each kept link keeps its id on its edge, which is all that routes read. `links` stays empty:
// the result is not a topology to validate or build, only to route on.
Topology Surviving(const Topology& topology, const std::vector<uint32_t>& failed_links) {
  std::vector<bool> failed(topology.links.size(), false);
  for (uint32_t link : failed_links) failed.at(link) = true;
  Topology rest;
  rest.description = topology.description;
  rest.graph = Graph(boost::num_vertices(topology.graph));
  for (Vertex v = 0; v < boost::num_vertices(topology.graph); ++v) {
    rest.graph[v] = topology.graph[v];
  }
  for (const Edge& edge : topology.links) {
    const LinkProps& props = topology.graph[edge];
    if (failed[props.id]) continue;
    boost::add_edge(boost::source(edge, topology.graph), boost::target(edge, topology.graph), props,
                    rest.graph);
  }
  rest.hosts = topology.hosts;
  return rest;
}

}  // namespace

Routes ComputeEqualCostRoutes(const Topology& topology, const std::vector<uint32_t>& failed_links) {
  if (failed_links.empty()) return ComputeEqualCostRoutes(topology);
  return ComputeEqualCostRoutes(Surviving(topology, failed_links));
}

std::optional<std::pair<size_t, size_t>> FindHostsCutOff(const Topology& topology,
                                                         const std::vector<uint32_t>& failed_links,
                                                         const std::vector<size_t>& hosts) {
  const Topology rest = Surviving(topology, failed_links);
  std::vector<Vertex> vertices;
  for (size_t h : hosts) vertices.push_back(topology.hosts.at(h));
  const auto pair = internal::FindHostsJoinedOnlyThroughHosts(rest.graph, vertices);
  if (!pair) return std::nullopt;
  const auto index = [&](Vertex v) {
    return hosts[static_cast<size_t>(std::find(vertices.begin(), vertices.end(), v) -
                                     vertices.begin())];
  };
  return std::make_pair(index(pair->first), index(pair->second));
}

}  // namespace nbox::topo
