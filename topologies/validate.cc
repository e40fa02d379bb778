// Topology::Validate: the invariants every consumer of a Topology relies on.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "topologies/connectivity.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  throw std::invalid_argument("Topology::Validate: " + what);
}

void CheckNames(const Graph& graph) {
  std::map<std::string, Vertex> first_use;
  for (Vertex v = 0; v < boost::num_vertices(graph); ++v) {
    const std::string& name = graph[v].name;
    if (name.empty()) Fail(fmt::format("vertex {} has an empty name; expected a unique name", v));
    auto [it, inserted] = first_use.emplace(name, v);
    if (!inserted) {
      Fail(fmt::format("name '{}' is used by vertices {} and {}; expected unique names", name,
                       it->second, v));
    }
  }
}

void CheckHostList(const Topology& topology) {
  const Graph& graph = topology.graph;
  const auto n = boost::num_vertices(graph);
  if (topology.hosts.empty()) Fail("the topology has no host; expected at least one");
  std::vector<bool> listed(n, false);
  for (size_t i = 0; i < topology.hosts.size(); ++i) {
    const Vertex v = topology.hosts[i];
    if (v >= n) Fail(fmt::format("hosts[{}] = {} is not a vertex (there are {})", i, v, n));
    if (graph[v].kind != NodeKind::kHost) {
      Fail(fmt::format("hosts[{}] is '{}', a switch; expected only hosts", i, graph[v].name));
    }
    if (listed[v]) Fail(fmt::format("host '{}' is listed twice in hosts", graph[v].name));
    listed[v] = true;
  }
  for (Vertex v = 0; v < n; ++v) {
    if (graph[v].kind == NodeKind::kHost && !listed[v]) {
      Fail(fmt::format("host '{}' is missing from hosts; expected every host listed",
                       graph[v].name));
    }
  }
}

void CheckLinks(const Topology& topology) {
  const Graph& graph = topology.graph;
  if (topology.links.size() != boost::num_edges(graph)) {
    Fail(fmt::format("links lists {} links but the graph has {}; expected every link listed",
                     topology.links.size(), boost::num_edges(graph)));
  }
  // Every listed edge must carry its own position as id; with as many entries as edges and
  // distinct ids, that also proves every edge is listed.
  std::vector<bool> seen(topology.links.size(), false);
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const LinkProps& link = graph[*e];
    const std::string& a = graph[boost::source(*e, graph)].name;
    const std::string& b = graph[boost::target(*e, graph)].name;
    if (link.id >= seen.size() || seen[link.id] || topology.links[link.id] != *e) {
      Fail(fmt::format("link {}-{} has id {}, which is not its position in links", a, b, link.id));
    }
    seen[link.id] = true;
    if (boost::source(*e, graph) == boost::target(*e, graph)) {
      Fail(fmt::format("link {} joins '{}' to itself; expected two different nodes", link.id, a));
    }
    if (!(link.rate_bps >= kMinLinkRateBps && link.rate_bps <= kMaxLinkRateBps)) {
      Fail(fmt::format("link {} ({}-{}) has rate {} bits/s; expected a rate from 1Mbps to 10Tbps",
                       link.id, a, b, link.rate_bps));
    }
    if (!(link.latency_s >= 0 && link.latency_s <= kMaxLinkLatencyS)) {
      Fail(fmt::format("link {} ({}-{}) has latency {} s; expected a latency from 0s to 1s",
                       link.id, a, b, link.latency_s));
    }
  }
}

void CheckConnectivity(const Topology& topology) {
  const Graph& graph = topology.graph;
  for (const Vertex h : topology.hosts) {
    if (boost::out_degree(h, graph) == 0) {
      Fail(fmt::format("host '{}' has no link; expected every host linked", graph[h].name));
    }
  }
  if (auto v = internal::FindVertexNotConnectedToFirst(graph)) {
    Fail(fmt::format("'{}' is not connected to '{}'; expected one connected graph", graph[*v].name,
                     graph[0].name));
  }
  if (auto pair = internal::FindHostsJoinedOnlyThroughHosts(graph, topology.hosts)) {
    Fail(fmt::format(
        "hosts '{}' and '{}' are joined only through other hosts; expected a path through "
        "switches (hosts do not forward traffic)",
        graph[pair->first].name, graph[pair->second].name));
  }
}

}  // namespace

void Topology::Validate() const {
  CheckNames(graph);
  CheckHostList(*this);
  CheckLinks(*this);
  CheckConnectivity(*this);
}

}  // namespace nbox::topo
