// Equal-cost shortest paths towards every host, with hosts never used as transit.
#include <algorithm>
#include <deque>

#include "topologies/topology.h"

namespace nbox::topo {
namespace {

constexpr int kUnreached = -1;

// Hop distance of every vertex to `destination` over paths whose inner vertices are switches:
// a breadth-first search that reaches hosts but never leaves one other than `destination`.
std::vector<int> HopsTo(const Graph& graph, Vertex destination) {
  std::vector<int> hops(boost::num_vertices(graph), kUnreached);
  std::deque<Vertex> frontier{destination};
  hops[destination] = 0;
  while (!frontier.empty()) {
    const Vertex u = frontier.front();
    frontier.pop_front();
    if (u != destination && graph[u].kind == NodeKind::kHost) continue;
    for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
      const Vertex w = boost::target(*e, graph);
      if (hops[w] == kUnreached) {
        hops[w] = hops[u] + 1;
        frontier.push_back(w);
      }
    }
  }
  return hops;
}

}  // namespace

Routes ComputeEqualCostRoutes(const Topology& topology) {
  const Graph& graph = topology.graph;
  const auto vertex_count = boost::num_vertices(graph);
  Routes routes;
  routes.next_links.assign(vertex_count, std::vector<std::vector<uint32_t>>(topology.hosts.size()));

  for (size_t h = 0; h < topology.hosts.size(); ++h) {
    const Vertex destination = topology.hosts[h];
    const std::vector<int> hops = HopsTo(graph, destination);
    for (Vertex v = 0; v < vertex_count; ++v) {
      if (v == destination || hops[v] == kUnreached) continue;
      std::vector<uint32_t>& next = routes.next_links[v][h];
      for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
        const Vertex w = boost::target(*e, graph);
        // A neighbour one hop closer is a next hop only if it may forward (a switch) or is
        // the destination itself; another host's distance is not a path through it.
        const bool may_carry = w == destination || graph[w].kind == NodeKind::kSwitch;
        if (may_carry && hops[w] == hops[v] - 1) next.push_back(graph[*e].id);
      }
      std::sort(next.begin(), next.end());
    }
  }
  return routes;
}

}  // namespace nbox::topo
