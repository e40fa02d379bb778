// Growing and copying a Topology while keeping its host list and link list in step with the
// graph.
#include "topologies/topology.h"

#include <map>
#include <stdexcept>
#include <string>

namespace nbox::topo {
namespace {

// `copy` was copied from `original.graph`; returns `original.links` translated to the edges
// of `copy`. Boost's copy adds the edges in the order edges() visits them, so the n-th edge
// of the copy is the copy of the n-th edge of the original.
std::vector<Edge> LinksOfCopy(const Topology& original, const Graph& copy) {
  std::map<const void*, size_t> position_of;  // original edge (its property) -> position
  std::vector<Edge> copied_edges;
  for (auto [e, end] = boost::edges(original.graph); e != end; ++e) {
    position_of.emplace(e->get_property(), position_of.size());
  }
  for (auto [e, end] = boost::edges(copy); e != end; ++e) copied_edges.push_back(*e);

  std::vector<Edge> links;
  links.reserve(original.links.size());
  for (size_t i = 0; i < original.links.size(); ++i) {
    auto it = position_of.find(original.links[i].get_property());
    if (it == position_of.end()) {
      throw std::logic_error("Topology copy: links[" + std::to_string(i) +
                             "] is not an edge of the graph");
    }
    links.push_back(copied_edges[it->second]);
  }
  return links;
}

}  // namespace

Topology::Topology(const Topology& other)
    : description(other.description),
      graph(other.graph),
      hosts(other.hosts),
      links(LinksOfCopy(other, graph)) {}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    description = other.description;
    graph = other.graph;
    links = LinksOfCopy(other, graph);
    hosts = other.hosts;
  }
  return *this;
}

Vertex Topology::AddHost(const std::string& name) {
  Vertex v = boost::add_vertex(NodeProps{name, NodeKind::kHost}, graph);
  hosts.push_back(v);
  return v;
}

Vertex Topology::AddSwitch(const std::string& name) {
  return boost::add_vertex(NodeProps{name, NodeKind::kSwitch}, graph);
}

uint32_t Topology::AddLink(Vertex a, Vertex b, double rate_bps, double latency_s) {
  const auto id = static_cast<uint32_t>(links.size());
  Edge e = boost::add_edge(a, b, LinkProps{id, rate_bps, latency_s}, graph).first;
  links.push_back(e);
  return id;
}

}  // namespace nbox::topo
