// The physical graph of a cluster: hosts, switches and full-duplex links.
//
// Nothing here knows about ns-3: the ns-3 module builds nodes and devices from this graph,
// and the routes below, so every fidelity level sees the same network.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace nbox::topo {

enum class NodeKind { kHost, kSwitch };

struct NodeProps {
  std::string name;  // unique, e.g. "h3", "leaf1", "spine0"
  NodeKind kind = NodeKind::kHost;
};

struct LinkProps {
  uint32_t id = 0;        // dense index, equal to the edge's position in Topology::links
  double rate_bps = 0;    // each direction
  double latency_s = 0;   // propagation delay, each direction
};

// vecS/vecS: vertex descriptors are dense indices 0..n-1; parallel links are allowed.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps,
                                    LinkProps>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

struct Topology {
  std::string description;     // one line for reports: "leaf-spine 4x2, 4 hosts/leaf, ..."
  Graph graph;
  std::vector<Vertex> hosts;   // host index -> vertex, in name order of creation
  std::vector<Edge> links;     // link id -> edge

  // Throws std::invalid_argument unless the graph is connected, names are unique, every
  // link has positive rate and non-negative latency, and every host has at least one link.
  void Validate() const;
};

// One switch, `hosts` hosts.
Topology MakeStar(int hosts, double rate_bps, double latency_s);

// Two-tier Clos. Every leaf connects to every spine with one link of fabric_rate_bps.
// Oversubscription = hosts_per_leaf * host_rate / (spines * fabric_rate).
Topology MakeLeafSpine(int leaves, int spines, int hosts_per_leaf, double host_rate_bps,
                       double fabric_rate_bps, double latency_s);

// k-ary fat-tree (Al-Fares et al.): k pods, k/2 edge and k/2 aggregation switches per pod,
// (k/2)^2 core switches, k^3/4 hosts; all links of one rate. k must be even and >= 2.
Topology MakeFatTree(int k, double rate_bps, double latency_s);

// A plain-text topology file (format in topologies/README.md). Errors throw
// nbox::topo::TopologyFileError naming file, line and what was expected.
Topology LoadTopologyFile(const std::string& path);

class TopologyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Equal-cost shortest (hop-count) routes towards every host.
struct Routes {
  // next_links[v][h]: the links leaving vertex v that lie on a shortest path to host h,
  // in ascending link id. Empty when v is host h itself.
  std::vector<std::vector<std::vector<uint32_t>>> next_links;
};
Routes ComputeEqualCostRoutes(const Topology& topology);

// Rank -> host index. Ranks fill hosts in order, `ranks_per_host` consecutive ranks each.
// Throws std::invalid_argument when world_size does not fit.
std::vector<int> PlaceRanks(const Topology& topology, int world_size, int ranks_per_host = 1);

// Oversubscription of a leaf-spine/fat-tree edge switch: downlink over uplink capacity
// (1.0 for non-blocking, +inf when a switch has no uplink). Used by reports.
double LeafOversubscription(const Topology& topology, Vertex leaf);

}  // namespace nbox::topo
