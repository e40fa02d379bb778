// Internal to nbox_topologies: the connectivity checks shared by Topology::Validate and the
// topology file parser (which reports the offending node's line).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "topologies/topology.h"

namespace nbox::topo::internal {

// The lowest-numbered vertex that no path joins to vertex 0; nullopt for a connected graph
// (and for an empty one).
std::optional<Vertex> FindVertexNotConnectedToFirst(const Graph& graph);

// Hosts never forward traffic, so two hosts can talk only over a direct link or a path whose
// inner vertices are all switches. Returns the first pair (a, b), a before b in `hosts`,
// without such a path; nullopt when every pair has one.
std::optional<std::pair<Vertex, Vertex>> FindHostsJoinedOnlyThroughHosts(
    const Graph& graph, const std::vector<Vertex>& hosts);

}  // namespace nbox::topo::internal
