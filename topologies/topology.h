// The physical graph of a cluster: hosts, switches and full-duplex links.
//
// Nothing here knows about ns-3: the ns-3 module builds nodes and devices from this graph,
// and the routes below, so every fidelity level sees the same network.
//
// Hosts are traffic endpoints only: they never forward traffic between other nodes, even when
// a host has several links (a multi-homed host). Validate() and ComputeEqualCostRoutes() both
// follow that rule.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nbox::topo {

enum class NodeKind { kHost, kSwitch };

struct NodeProps {
  std::string name;  // unique, e.g. "h3", "leaf1", "spine0"
  NodeKind kind = NodeKind::kHost;
};

// The range of a link's rate and latency, whatever the source (scenario keys, topology files,
// the builders below): below 1 Mb/s a single packet outlasts TCP's timers, beyond 1 s of
// latency ns-3's time arithmetic loses the value (1e300 s ran as 0 s).
inline constexpr double kMinLinkRateBps = 1e6;
inline constexpr double kMaxLinkRateBps = 10e12;
inline constexpr double kMaxLinkLatencyS = 1;

struct LinkProps {
  uint32_t id = 0;       // dense index, equal to the edge's position in Topology::links
  double rate_bps = 0;   // each direction
  double latency_s = 0;  // propagation delay, each direction
};

// vecS/vecS: vertex descriptors are dense indices 0..n-1; parallel links are allowed.
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps, LinkProps>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

struct Topology {
  std::string description;  // one line for reports: "leaf-spine 4x2, 4 hosts/leaf, ..."
  Graph graph;
  std::vector<Vertex> hosts;  // host index -> vertex, in order of creation
  std::vector<Edge> links;    // link id -> edge

  // An edge descriptor of an undirected adjacency_list points into the graph it came from,
  // and Boost 1.74's adjacency_list copies even when moved: copying or moving a Topology
  // therefore copies the graph and re-points `links` at the copy's own edges (O(V + E)).
  Topology() = default;
  Topology(const Topology& other);
  Topology(Topology&& other) : Topology(static_cast<const Topology&>(other)) {}
  Topology& operator=(const Topology& other);
  Topology& operator=(Topology&& other) { return *this = static_cast<const Topology&>(other); }
  ~Topology() = default;

  // Append a node or a link and keep `hosts` and `links` (dense link ids) consistent. They
  // check nothing else: call Validate() once the graph is complete.
  Vertex AddHost(const std::string& name);
  Vertex AddSwitch(const std::string& name);
  uint32_t AddLink(Vertex a, Vertex b, double rate_bps, double latency_s);

  // Throws std::invalid_argument unless: names are non-empty and unique; there is at
  // least one host and `hosts` lists every host vertex exactly once; `links[i]` is an edge
  // whose id is i and every edge is listed; no link joins a node to itself; every link has a
  // rate from kMinLinkRateBps to kMaxLinkRateBps and a latency from 0 to kMaxLinkLatencyS;
  // every host has at least one
  // link; the graph is connected; and every host reaches every other host without passing
  // through a third host.
  void Validate() const;
};

// One switch "sw0" and hosts "h0".."h<hosts-1>"; link i joins host i to the switch.
// hosts >= 1, rate > 0, latency >= 0 (std::invalid_argument otherwise, as for all builders).
Topology MakeStar(int hosts, double rate_bps, double latency_s);

// Two-tier Clos. Every leaf connects to every spine with one link of fabric_rate_bps.
// Oversubscription = hosts_per_leaf * host_rate / (spines * fabric_rate).
// Hosts "h0".. (host i on leaf i / hosts_per_leaf), leaves "leaf0".., spines "spine0"..
// Links: first the host links in host order, then leaf l to spine s at
// hosts + l * spines + s.
Topology MakeLeafSpine(int leaves, int spines, int hosts_per_leaf, double host_rate_bps,
                       double fabric_rate_bps, double latency_s);

// k-ary fat-tree (Al-Fares et al.): k pods, k/2 edge and k/2 aggregation switches per pod,
// (k/2)^2 core switches, k^3/4 hosts; all links of one rate. k must be even and >= 2.
// Host index p*(k/2)^2 + e*(k/2) + j is host j of edge switch "edge<p>_<e>" in pod p.
// Aggregation switch "agg<p>_<a>" links to every edge switch of its pod and to the cores
// "core<a*(k/2)+c>", c = 0..k/2-1. Links: host links, then edge-agg, then agg-core.
Topology MakeFatTree(int k, double rate_bps, double latency_s);

// Thrown by LoadTopologyFile: "path:line: what is wrong; expected ...".
class TopologyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A plain-text topology file (format in topologies/README.md). Errors throw
// nbox::topo::TopologyFileError naming file, line and what was expected. Nodes get vertex
// indices, hosts get host indices and links get ids in the order the file declares them.
Topology LoadTopologyFile(const std::string& path);

// Equal-cost shortest (hop-count) routes towards every host. Hosts are never transit: a path
// may start at a host and end at a host, every vertex in between is a switch.
//
// Stored compactly, so that thousands of hosts fit: each distinct next-hop set is kept once
// and named by an id; a switch keeps one set id and one hop count per host; a host with a
// single link keeps nothing, since that link is its way to every host it reaches; a host with
// a few links (a GPU with an NVLink and a NIC) keeps only its links: its next links towards a
// host are those whose far end is that host or a switch fewest hops from it, read from the
// switches' hop counts (docs/DESIGN.md, "Routes").
class Routes {
 public:
  static constexpr uint32_t kEmptySet = 0;  // the id of the empty set
  // A host with up to this many links derives its sets from its neighbours' hop counts (it
  // keeps the ids of all 2^links subsets of its links); one with more keeps a row.
  static constexpr uint32_t kMaxDerivedLinks = 8;
  static constexpr uint16_t kFar = UINT16_MAX;  // a hop count: not reached

  Routes() = default;  // routes of an empty graph: no vertex, no host

  size_t vertex_count() const { return vertices_.size(); }
  size_t host_count() const { return host_vertices_.size(); }

  // The links leaving vertex v that lie on a shortest path to host index `host`, in
  // ascending link id. Empty when v is that host itself (and when v cannot reach it, which a
  // validated topology rules out for hosts). Both arguments must be in range.
  const std::vector<uint32_t>& NextLinks(Vertex v, size_t host) const {
    return sets_[SetId(v, host)];
  }
  // The id of NextLinks(v, host): equal sets have equal ids, so a consumer can convert each
  // distinct set once. Ids run from 0 (kEmptySet) to set_count() - 1.
  uint32_t SetId(Vertex v, size_t host) const;
  const std::vector<uint32_t>& Set(uint32_t id) const { return sets_.at(id); }
  size_t set_count() const { return sets_.size(); }

  // The link of a host that has exactly one: NextLinks(v, h) is {that link} for every host h
  // that v reaches. nullopt for switches and for hosts with several links.
  std::optional<uint32_t> OnlyLink(Vertex v) const;

  // Heap bytes held by the tables (for benchmarks and reports).
  size_t MemoryBytes() const;

 private:
  friend Routes ComputeEqualCostRoutes(const Topology& topology);
  static constexpr uint32_t kNoRow = UINT32_MAX;

  struct VertexEntry {
    // Switches and hosts with no or many links: set ids and hop counts at row * host_count().
    uint32_t row = kNoRow;
    bool is_switch = false;
    // Hosts with one link (row == kNoRow): that link, the id of the set {link}, the vertex
    // at its far end and whether that vertex is a switch.
    uint32_t only_link = 0;
    uint32_t only_link_set = kEmptySet;
    Vertex neighbour = 0;
    bool neighbour_is_switch = false;
    // Hosts with 2 to kMaxDerivedLinks links (row == kNoRow): links in ascending id at
    // derived_links_[first_link ...], their far ends beside them in derived_neighbours_, and
    // the id of the subset of mask m of them at subset_ids_[first_subset + m].
    uint32_t first_link = 0;
    uint32_t link_count = 0;
    uint32_t first_subset = 0;
  };

  uint32_t DerivedSetId(const VertexEntry& entry, Vertex destination, size_t host) const;

  std::vector<std::vector<uint32_t>> sets_{{}};  // sets_[kEmptySet] is the empty set
  std::vector<Vertex> host_vertices_;            // host index -> vertex
  std::vector<VertexEntry> vertices_;            // vertex -> how its routes are stored
  std::vector<uint32_t> set_ids_;                // rows of host_count() set ids
  std::vector<uint16_t> hops_;                   // rows of host_count() hop counts
  std::vector<uint32_t> derived_links_;
  std::vector<Vertex> derived_neighbours_;
  std::vector<uint32_t> subset_ids_;
};
// One breadth-first search per host, except that the hosts with a single link to one switch
// share one: O(destinations searched * (vertices + links)) time; memory
// O(hosts * switches) set ids and hop counts plus the distinct sets.
Routes ComputeEqualCostRoutes(const Topology& topology);
// The same routes over every link but `failed_links` (link ids): what the fabric's routing
// converges to once they are down. The link ids in the sets are the topology's.
Routes ComputeEqualCostRoutes(const Topology& topology, const std::vector<uint32_t>& failed_links);
// Of `hosts` (host indices), the first pair that no path joins once `failed_links` are down
// (hosts are never transit); nullopt when every pair is still joined.
std::optional<std::pair<size_t, size_t>> FindHostsCutOff(const Topology& topology,
                                                         const std::vector<uint32_t>& failed_links,
                                                         const std::vector<size_t>& hosts);
// The vertices ComputeEqualCostRoutes keeps a row of host_count() set ids and hop counts for
// (the switches and the hosts with no or more than Routes::kMaxDerivedLinks links), for
// estimating its memory before it is built.
size_t CountRouteRows(const Topology& topology);

// Every host's name, by host index.
std::vector<std::string> HostNames(const Topology& topology);

// Rank -> host index. Ranks fill hosts in order, `ranks_per_host` consecutive ranks each
// (the last used host may be partly filled).
// Throws std::invalid_argument when world_size does not fit.
std::vector<int> PlaceRanks(const Topology& topology, int world_size, int ranks_per_host = 1);

// The placements below give a job hosts the jobs placed before it on the same fabric left
// free: `taken[h]` marks host h as another job's (empty: every host free). A job alone on its
// fabric gets the same hosts whatever placement it asks for, as it did before clusters.

// Rank -> host index, one rank a host: the first world_size free hosts, in host order.
// Throws std::invalid_argument when world_size does not fit.
std::vector<int> PackedRanks(const Topology& topology, int world_size,
                             const std::vector<bool>& taken = {});

// Rank -> host index, one rank a host, dealt round-robin over the hosts' switches (a host's
// switch: the node its first link reaches; switches in the order their first host appears,
// hosts in host order under each): consecutive ranks sit under different switches, as a
// scheduler that spreads a job does. A switch whose free hosts are used up is skipped.
// Throws std::invalid_argument when world_size does not fit.
std::vector<int> SpreadRanks(const Topology& topology, int world_size,
                             const std::vector<bool>& taken = {});

// Rank -> host index: the first world_size hosts of a permutation of the free hosts drawn from
// `seed` (Fisher-Yates over mt19937_64 with the bounded draws made here, so that a seed gives
// the same placement on every platform). Throws std::invalid_argument when world_size does not
// fit.
std::vector<int> ShuffledRanks(const Topology& topology, int world_size, uint64_t seed,
                               const std::vector<bool>& taken = {});

// Rank -> host index from a placement file: host names or ranges of them ("s0g0..s0g7"), any
// number to a line, '#' starting a comment; rank r runs on the r-th host named. Throws
// std::invalid_argument naming the file and line: a name that is no host (with the nearest
// host), a switch, a host named twice or taken by an earlier job, more or fewer hosts than
// world_size.
std::vector<int> PlaceRanksFromFile(const Topology& topology, int world_size,
                                    const std::string& path, const std::vector<bool>& taken = {});

// Oversubscription of a leaf-spine/fat-tree edge switch: downlink (links to hosts) over
// uplink (links to switches) capacity; 1.0 for non-blocking, +inf when a switch has no
// uplink. Used by reports. Throws std::invalid_argument unless `leaf` is a switch with at
// least one host link.
double LeafOversubscription(const Topology& topology, Vertex leaf);

}  // namespace nbox::topo
