// Equal-cost shortest paths towards every host, with hosts never used as transit, stored as
// shared next-hop sets (see Routes in topology.h).
#include <algorithm>
#include <unordered_map>

#include "topologies/topology.h"

namespace nbox::topo {
namespace {

constexpr int kUnreached = -1;

// The links between switches, per switch: a search towards a host only ever crosses these (no
// host is transit), and a switch's next hops are among them or its link to the host itself. A
// rail switch has thousands of links to GPUs and a few dozen to spines.
struct SwitchLinks {
  std::vector<size_t> first;  // per vertex: its first entry in `links` (first[v + 1]: the end)
  std::vector<std::pair<uint32_t, Vertex>> links;  // (link id, the switch at its far end)
};

SwitchLinks SwitchLinksOf(const Graph& graph) {
  SwitchLinks out;
  const size_t vertex_count = boost::num_vertices(graph);
  out.first.assign(vertex_count + 1, 0);
  for (Vertex v = 0; v < vertex_count; ++v) {
    out.first[v] = out.links.size();
    if (graph[v].kind != NodeKind::kSwitch) continue;
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
      const Vertex w = boost::target(*e, graph);
      if (graph[w].kind == NodeKind::kSwitch) out.links.emplace_back(graph[*e].id, w);
    }
  }
  out.first[vertex_count] = out.links.size();
  return out;
}

// Hop distance to `destination` over paths whose inner vertices are switches, for the
// destination's neighbours and every switch it reaches (a breadth-first search that steps from
// the destination to its neighbours and then only from switch to switch); `reached` lists
// them. Every other entry of `hops` stays kUnreached. `hops` is the caller's, all kUnreached
// on entry; ClearHops puts back the entries a search set.
void HopsTo(const Graph& graph, const SwitchLinks& switch_links, Vertex destination,
            std::vector<int>& hops, std::vector<Vertex>& reached) {
  reached.clear();
  reached.push_back(destination);
  hops[destination] = 0;
  for (auto [e, end] = boost::out_edges(destination, graph); e != end; ++e) {
    const Vertex w = boost::target(*e, graph);
    if (hops[w] == kUnreached) {
      hops[w] = 1;
      reached.push_back(w);
    }
  }
  for (size_t next = 1; next < reached.size(); ++next) {
    const Vertex u = reached[next];
    if (graph[u].kind != NodeKind::kSwitch) continue;
    for (size_t i = switch_links.first[u]; i < switch_links.first[u + 1]; ++i) {
      const Vertex w = switch_links.links[i].second;
      if (hops[w] == kUnreached) {
        hops[w] = hops[u] + 1;
        reached.push_back(w);
      }
    }
  }
}

void ClearHops(const std::vector<Vertex>& reached, std::vector<int>& hops) {
  for (Vertex v : reached) hops[v] = kUnreached;
}

// The distance of a host that is not the destination, as the search would give it: one more
// than its nearest neighbour that is the destination or a reached switch (another host is
// never transit). Sets hops[v]; returns false when it is not reached.
bool HostHops(const Graph& graph, Vertex v, Vertex destination, std::vector<int>& hops) {
  int nearest = kUnreached;
  for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
    const Vertex w = boost::target(*e, graph);
    const bool may_carry = w == destination || graph[w].kind == NodeKind::kSwitch;
    if (may_carry && hops[w] != kUnreached && (nearest == kUnreached || hops[w] < nearest)) {
      nearest = hops[w];
    }
  }
  if (nearest == kUnreached) return false;
  hops[v] = nearest + 1;
  return true;
}

// Sets `next` to the links leaving `v` that lie on a shortest path to `destination`, in
// ascending id, given the hop distances `hops` to it. A switch's are among its links to
// switches and its links to the destination; a host's among all its links.
void NextLinksTowards(const Graph& graph, const SwitchLinks& switch_links, Vertex v,
                      Vertex destination, const std::vector<int>& hops,
                      std::vector<uint32_t>& next) {
  next.clear();
  if (v == destination || hops[v] == kUnreached) return;
  if (graph[v].kind == NodeKind::kSwitch) {
    for (size_t i = switch_links.first[v]; i < switch_links.first[v + 1]; ++i) {
      const auto [id, w] = switch_links.links[i];
      if (hops[w] == hops[v] - 1) next.push_back(id);
    }
    if (hops[v] == 1) {
      for (auto [e, end] = boost::out_edges(destination, graph); e != end; ++e) {
        if (boost::target(*e, graph) == v) next.push_back(graph[*e].id);
      }
    }
  } else {
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
      const Vertex w = boost::target(*e, graph);
      // A neighbour one hop closer is a next hop only if it may forward (a switch) or is the
      // destination itself; another host's distance is not a path through it.
      const bool may_carry = w == destination || graph[w].kind == NodeKind::kSwitch;
      if (may_carry && hops[w] == hops[v] - 1) next.push_back(graph[*e].id);
    }
  }
  std::sort(next.begin(), next.end());
}

struct LinkSetHash {
  size_t operator()(const std::vector<uint32_t>& set) const {
    uint64_t h = set.size();
    for (uint32_t link : set) h = (h ^ link) * 0x100000001b3ULL;  // FNV-1a style
    return static_cast<size_t>(h);
  }
};

// Gives each distinct set one id, in order of first appearance; `sets` starts with the
// empty set at Routes::kEmptySet. The map is only looked up, never iterated.
class SetInterner {
 public:
  explicit SetInterner(std::vector<std::vector<uint32_t>>& sets) : sets_(sets) {
    for (uint32_t id = 0; id < sets_.size(); ++id) ids_.emplace(sets_[id], id);
  }
  uint32_t Intern(const std::vector<uint32_t>& set) {
    auto it = ids_.find(set);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(sets_.size());
    sets_.push_back(set);
    ids_.emplace(set, id);
    return id;
  }

 private:
  std::vector<std::vector<uint32_t>>& sets_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, LinkSetHash> ids_;
};

// Destination hosts that one search serves: the hosts with a single link to one switch form
// a group (in host order), every other host a group of its own. For two hosts h, h' of a
// group on switch s, every vertex but h, h' has the same distance to both, and every vertex
// but s the same next links (only s is adjacent to them); s reaches each over its own link.
std::vector<std::vector<size_t>> DestinationGroups(const Topology& topology) {
  const Graph& graph = topology.graph;
  std::vector<std::vector<size_t>> groups;
  std::vector<int> group_of_switch(boost::num_vertices(graph), -1);
  for (size_t h = 0; h < topology.hosts.size(); ++h) {
    const Vertex host = topology.hosts[h];
    const Vertex neighbour = boost::out_degree(host, graph) == 1
                                 ? boost::target(*boost::out_edges(host, graph).first, graph)
                                 : host;
    if (neighbour == host || graph[neighbour].kind != NodeKind::kSwitch) {
      groups.push_back({h});
      continue;
    }
    if (group_of_switch[neighbour] < 0) {
      group_of_switch[neighbour] = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[group_of_switch[neighbour]].push_back(h);
  }
  return groups;
}

// How a vertex's routes are stored: see Routes in topology.h.
enum class Storage { kOnlyLink, kDerived, kRow };

Storage StorageOf(const Graph& graph, Vertex v) {
  if (graph[v].kind == NodeKind::kSwitch) return Storage::kRow;
  const size_t degree = boost::out_degree(v, graph);
  if (degree == 1) return Storage::kOnlyLink;
  if (degree >= 2 && degree <= Routes::kMaxDerivedLinks) return Storage::kDerived;
  return Storage::kRow;
}

}  // namespace

size_t CountRouteRows(const Topology& topology) {
  size_t rows = 0;
  for (Vertex v = 0; v < boost::num_vertices(topology.graph); ++v)
    rows += StorageOf(topology.graph, v) == Storage::kRow ? 1 : 0;
  return rows;
}

uint32_t Routes::SetId(Vertex v, size_t host) const {
  const VertexEntry& entry = vertices_[v];
  if (entry.row != kNoRow) return set_ids_[entry.row * host_vertices_.size() + host];
  const Vertex destination = host_vertices_[host];
  if (destination == v) return kEmptySet;
  if (entry.link_count > 0) return DerivedSetId(entry, destination, host);
  // A host with one link reaches exactly the hosts its neighbour is, or forwards towards:
  // the search of HopsTo gets to it only through that neighbour.
  const bool reaches = entry.neighbour == destination ||
                       (entry.neighbour_is_switch && SetId(entry.neighbour, host) != kEmptySet);
  return reaches ? entry.only_link_set : kEmptySet;
}

// As the search of HopsTo would find them: a host's distance is one more than its nearest
// neighbour that is the destination or a switch (another host is never transit), and its next
// links are the links to every such neighbour that near.
uint32_t Routes::DerivedSetId(const VertexEntry& entry, Vertex destination, size_t host) const {
  uint32_t nearest = kFar;
  uint32_t mask = 0;
  for (uint32_t i = 0; i < entry.link_count; ++i) {
    const Vertex w = derived_neighbours_[entry.first_link + i];
    uint32_t hops = kFar;
    if (w == destination) {
      hops = 0;
    } else if (vertices_[w].is_switch) {
      hops = hops_[vertices_[w].row * host_vertices_.size() + host];
    }
    if (hops == kFar) continue;
    if (hops < nearest) {
      nearest = hops;
      mask = 0;
    }
    if (hops == nearest) mask |= 1u << i;
  }
  return subset_ids_[entry.first_subset + mask];  // mask 0: the empty set
}

std::optional<uint32_t> Routes::OnlyLink(Vertex v) const {
  const VertexEntry& entry = vertices_.at(v);
  if (entry.row != kNoRow || entry.link_count > 0) return std::nullopt;
  return entry.only_link;
}

size_t Routes::MemoryBytes() const {
  size_t bytes =
      sets_.capacity() * sizeof(sets_[0]) + host_vertices_.capacity() * sizeof(Vertex) +
      vertices_.capacity() * sizeof(VertexEntry) + set_ids_.capacity() * sizeof(uint32_t) +
      hops_.capacity() * sizeof(uint16_t) + derived_links_.capacity() * sizeof(uint32_t) +
      derived_neighbours_.capacity() * sizeof(Vertex) + subset_ids_.capacity() * sizeof(uint32_t);
  for (const auto& set : sets_) bytes += set.capacity() * sizeof(uint32_t);
  return bytes;
}

Routes ComputeEqualCostRoutes(const Topology& topology) {
  const Graph& graph = topology.graph;
  const size_t vertex_count = boost::num_vertices(graph);
  const size_t host_count = topology.hosts.size();
  Routes routes;
  routes.host_vertices_ = topology.hosts;
  routes.vertices_.resize(vertex_count);
  SetInterner interner(routes.sets_);

  // A host of a few links keeps them in ascending id with their far ends, and the id of every
  // subset of them, so that a lookup only picks the subset (Routes::DerivedSetId).
  std::vector<std::pair<uint32_t, Vertex>> links;
  std::vector<uint32_t> subset;
  auto derive = [&](Vertex v, Routes::VertexEntry& entry) {
    links.clear();
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e)
      links.emplace_back(graph[*e].id, boost::target(*e, graph));
    std::sort(links.begin(), links.end());
    entry.first_link = static_cast<uint32_t>(routes.derived_links_.size());
    entry.link_count = static_cast<uint32_t>(links.size());
    entry.first_subset = static_cast<uint32_t>(routes.subset_ids_.size());
    for (const auto& [id, neighbour] : links) {
      routes.derived_links_.push_back(id);
      routes.derived_neighbours_.push_back(neighbour);
    }
    for (uint32_t mask = 0; mask < (1u << links.size()); ++mask) {
      subset.clear();
      for (size_t i = 0; i < links.size(); ++i)
        if ((mask >> i) & 1u) subset.push_back(links[i].first);
      routes.subset_ids_.push_back(interner.Intern(subset));
    }
  };

  // Hosts with one link need no table, hosts with a few derive theirs from the switches' hop
  // counts; every other vertex gets a row of set ids and hop counts.
  std::vector<Vertex> row_vertices;
  for (Vertex v = 0; v < vertex_count; ++v) {
    Routes::VertexEntry& entry = routes.vertices_[v];
    entry.is_switch = graph[v].kind == NodeKind::kSwitch;
    const Storage storage = StorageOf(graph, v);
    if (storage == Storage::kOnlyLink) {
      const Edge link = *boost::out_edges(v, graph).first;
      entry.only_link = graph[link].id;
      entry.only_link_set = interner.Intern({entry.only_link});
      entry.neighbour = boost::target(link, graph);
      entry.neighbour_is_switch = graph[entry.neighbour].kind == NodeKind::kSwitch;
    } else if (storage == Storage::kDerived) {
      derive(v, entry);
    } else {
      entry.row = static_cast<uint32_t>(row_vertices.size());
      row_vertices.push_back(v);
    }
  }
  routes.set_ids_.assign(row_vertices.size() * host_count, Routes::kEmptySet);
  routes.hops_.assign(row_vertices.size() * host_count, Routes::kFar);

  // One search per group of destinations; only the rows of what it reached are written (the
  // rest keep the empty set and kFar), so a switch that cannot reach a host costs nothing for it
  // (an NVSwitch reaches only its own server's GPUs).
  const SwitchLinks switch_links = SwitchLinksOf(graph);
  std::vector<Vertex> row_hosts;  // hosts with a row: their distance is derived per search
  for (Vertex v : row_vertices) {
    if (graph[v].kind != NodeKind::kSwitch) row_hosts.push_back(v);
  }
  std::vector<int> hops(vertex_count, kUnreached);
  std::vector<Vertex> reached;
  reached.reserve(vertex_count);
  std::vector<uint32_t> next;
  for (const std::vector<size_t>& group : DestinationGroups(topology)) {
    const Vertex first = topology.hosts[group.front()];
    HopsTo(graph, switch_links, first, hops, reached);
    for (Vertex v : row_hosts) {
      if (v != first && hops[v] == kUnreached && HostHops(graph, v, first, hops)) {
        reached.push_back(v);
      }
    }
    for (Vertex v : reached) {
      const uint32_t row = routes.vertices_[v].row;
      if (row == Routes::kNoRow) continue;
      uint32_t* row_ids = &routes.set_ids_[row * host_count];
      // Every vertex but the group's hosts is as far from each of them.
      const uint16_t far = hops[v] >= Routes::kFar ? Routes::kFar : static_cast<uint16_t>(hops[v]);
      for (size_t h : group) routes.hops_[row * host_count + h] = far;
      // (A group of several hosts is of single-homed hosts, whose entries name the switch.)
      if (group.size() > 1 && v == routes.vertices_[first].neighbour) {
        // The switch of a group of single-homed hosts: each over its own link.
        for (size_t h : group) row_ids[h] = routes.vertices_[topology.hosts[h]].only_link_set;
        continue;
      }
      NextLinksTowards(graph, switch_links, v, first, hops, next);
      const uint32_t id = interner.Intern(next);
      for (size_t h : group) row_ids[h] = id;
    }
    ClearHops(reached, hops);
  }
  return routes;
}

}  // namespace nbox::topo
