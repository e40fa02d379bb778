// Connectivity of the whole graph, and of host pairs when hosts may not be transit.
#include "topologies/connectivity.h"

#include <algorithm>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <iterator>

namespace nbox::topo::internal {
namespace {

struct IsSwitch {
  const Graph* graph = nullptr;
  bool operator()(Vertex v) const { return (*graph)[v].kind == NodeKind::kSwitch; }
};

// What one host touches: the components of the switch-only subgraph it links to, and the
// hosts it links to directly. Both sorted.
struct HostReach {
  std::vector<int> switch_components;
  std::vector<Vertex> host_neighbours;
};

bool SharesAComponent(const HostReach& a, const HostReach& b) {
  std::vector<int> common;
  std::set_intersection(a.switch_components.begin(), a.switch_components.end(),
                        b.switch_components.begin(), b.switch_components.end(),
                        std::back_inserter(common));
  return !common.empty();
}

}  // namespace

std::optional<Vertex> FindVertexNotConnectedToFirst(const Graph& graph) {
  const auto n = boost::num_vertices(graph);
  if (n == 0) return std::nullopt;
  std::vector<int> component(n);
  boost::connected_components(graph, component.data());
  for (Vertex v = 1; v < n; ++v) {
    if (component[v] != component[0]) return v;
  }
  return std::nullopt;
}

std::optional<std::pair<Vertex, Vertex>> FindHostsJoinedOnlyThroughHosts(
    const Graph& graph, const std::vector<Vertex>& hosts) {
  // Components of the graph with the hosts taken out: two hosts talk without a transit host
  // exactly when they link to a common component, or to each other.
  const auto n = boost::num_vertices(graph);
  std::vector<int> component(n, -1);
  boost::filtered_graph<Graph, boost::keep_all, IsSwitch> switches_only(graph, boost::keep_all(),
                                                                        IsSwitch{&graph});
  // Boost's component counter overflows when the filter leaves no vertex at all.
  const bool has_switch =
      std::any_of(boost::vertices(graph).first, boost::vertices(graph).second, IsSwitch{&graph});
  if (has_switch) boost::connected_components(switches_only, component.data());

  std::vector<HostReach> reach(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (auto [e, end] = boost::out_edges(hosts[i], graph); e != end; ++e) {
      const Vertex peer = boost::target(*e, graph);
      if (graph[peer].kind == NodeKind::kSwitch) {
        reach[i].switch_components.push_back(component[peer]);
      } else {
        reach[i].host_neighbours.push_back(peer);
      }
    }
    auto& components = reach[i].switch_components;
    std::sort(components.begin(), components.end());
    components.erase(std::unique(components.begin(), components.end()), components.end());
    std::sort(reach[i].host_neighbours.begin(), reach[i].host_neighbours.end());
  }

  // The usual case, checked in linear time: one switch component touches every host.
  if (!reach.empty()) {
    std::vector<int> everywhere = reach[0].switch_components;
    for (size_t i = 1; i < reach.size() && !everywhere.empty(); ++i) {
      std::vector<int> kept;
      std::set_intersection(everywhere.begin(), everywhere.end(),
                            reach[i].switch_components.begin(), reach[i].switch_components.end(),
                            std::back_inserter(kept));
      everywhere = std::move(kept);
    }
    if (!everywhere.empty()) return std::nullopt;
  }
  // Otherwise (hosts joined by direct links, separate fabrics) check every pair.
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (size_t j = i + 1; j < hosts.size(); ++j) {
      const bool direct = std::binary_search(reach[i].host_neighbours.begin(),
                                             reach[i].host_neighbours.end(), hosts[j]);
      if (!direct && !SharesAComponent(reach[i], reach[j])) {
        return std::make_pair(hosts[i], hosts[j]);
      }
    }
  }
  return std::nullopt;
}

}  // namespace nbox::topo::internal
