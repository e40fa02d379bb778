// Oversubscription of an edge (leaf) switch, for reports.
#include <fmt/format.h>

#include <limits>
#include <stdexcept>

#include "topologies/topology.h"

namespace nbox::topo {

double LeafOversubscription(const Topology& topology, Vertex leaf) {
  const Graph& graph = topology.graph;
  if (leaf >= boost::num_vertices(graph)) {
    throw std::invalid_argument(
        fmt::format("LeafOversubscription: leaf {} is not a vertex; expected 0..{}", leaf,
                    boost::num_vertices(graph) - 1));
  }
  if (graph[leaf].kind != NodeKind::kSwitch) {
    throw std::invalid_argument(fmt::format(
        "LeafOversubscription: '{}' is a host; expected an edge switch", graph[leaf].name));
  }
  double downlink_bps = 0;
  double uplink_bps = 0;
  for (auto [e, end] = boost::out_edges(leaf, graph); e != end; ++e) {
    const bool to_host = graph[boost::target(*e, graph)].kind == NodeKind::kHost;
    (to_host ? downlink_bps : uplink_bps) += graph[*e].rate_bps;
  }
  if (downlink_bps == 0) {
    throw std::invalid_argument(fmt::format(
        "LeafOversubscription: '{}' has no host link; expected an edge switch", graph[leaf].name));
  }
  if (uplink_bps == 0) return std::numeric_limits<double>::infinity();
  return downlink_bps / uplink_bps;
}

}  // namespace nbox::topo
