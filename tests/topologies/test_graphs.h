// Helpers shared by the topologies tests: name lookups, hand-built graphs and an enumerator of
// the equal-cost paths that a Routes table describes.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topologies/topology.h"

namespace nbox::topo::testing {

// The vertex named `name`; fails the test (and returns 0) when there is none.
inline Vertex VertexNamed(const Topology& topology, const std::string& name) {
  for (Vertex v = 0; v < boost::num_vertices(topology.graph); ++v) {
    if (topology.graph[v].name == name) return v;
  }
  ADD_FAILURE() << "no vertex named " << name;
  return 0;
}

// "a-b" for link `id`, endpoints in the order the link was added.
inline std::string LinkEnds(const Topology& topology, uint32_t id) {
  const Edge e = topology.links.at(id);
  return topology.graph[boost::source(e, topology.graph)].name + "-" +
         topology.graph[boost::target(e, topology.graph)].name;
}

inline Vertex OtherEnd(const Topology& topology, uint32_t link, Vertex from) {
  const Edge e = topology.links.at(link);
  const Vertex a = boost::source(e, topology.graph);
  return a == from ? boost::target(e, topology.graph) : a;
}

// Every path (as the list of vertices visited) from host `src` to host `dst` that follows the
// next-hop sets of `routes`. Independent of how the routes were computed: it only walks them.
inline void CollectPaths(const Topology& topology, const Routes& routes, int dst, Vertex at,
                         std::vector<Vertex>& path, std::vector<std::vector<Vertex>>& out) {
  path.push_back(at);
  if (at == topology.hosts[dst]) {
    out.push_back(path);
  } else if (path.size() <= boost::num_vertices(topology.graph)) {  // guards against a loop
    for (uint32_t link : routes.NextLinks(at, dst)) {
      CollectPaths(topology, routes, dst, OtherEnd(topology, link, at), path, out);
    }
  }
  path.pop_back();
}

inline std::vector<std::vector<Vertex>> EqualCostPaths(const Topology& topology,
                                                       const Routes& routes, int src, int dst) {
  std::vector<Vertex> path;
  std::vector<std::vector<Vertex>> out;
  CollectPaths(topology, routes, dst, topology.hosts[src], path, out);
  return out;
}

}  // namespace nbox::topo::testing
