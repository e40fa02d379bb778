// LoadTopologyFile: the plain-text topology format of topologies/README.md.
//
// One statement per line; a line's words are separated by spaces or tabs and everything
// from '#' on is a comment:
//   host NAMES...                 switch NAMES...
//   link NAMES NAMES RATE LATENCY (one link for every pair of the two name lists)
// Nodes must be declared before a link names them. Every error names the file and line.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/shortened.h"
#include "common/units.h"
#include "topologies/connectivity.h"
#include "topologies/file_names.h"
#include "topologies/topology.h"

namespace nbox::topo {
namespace {

constexpr char kDirectives[] = "host, switch or link";

// The most nodes and links a file may declare: ranges and link statements multiply, and
// "link h0..h99999 s0..s99999 ..." would otherwise ask for 10^10 links and exhaust memory.
// The built-in topologies a run can use stay below (a k = 64 fat-tree: 70,656 nodes and
// 196,608 links).
constexpr size_t kMaxNodes = size_t{1} << 21;
constexpr size_t kMaxLinks = size_t{1} << 22;

class TopologyFileParser {
 public:
  explicit TopologyFileParser(std::string path) : path_(std::move(path)) {}

  Topology Parse() {
    std::ifstream in(path_);
    if (!in) {
      throw TopologyFileError(
          fmt::format("{}: cannot open the topology file; expected a readable file", path_));
    }
    std::string line;
    for (int line_number = 1; std::getline(in, line); ++line_number) {
      ParseStatement(internal::SplitWords(line), line_number);
    }
    CheckWholeGraph();
    topology_.description = fmt::format(
        "file {}: {} hosts, {} switches, {} links", path_, topology_.hosts.size(),
        boost::num_vertices(topology_.graph) - topology_.hosts.size(), topology_.links.size());
    return std::move(topology_);
  }

 private:
  [[noreturn]] void Fail(int line_number, const std::string& what) const {
    throw TopologyFileError(fmt::format("{}:{}: {}", path_, line_number, what));
  }

  void ParseStatement(const std::vector<std::string_view>& words, int line_number) {
    if (words.empty()) return;
    const std::string_view directive = words[0];
    if (directive == "host" || directive == "switch") {
      if (words.size() < 2) {
        Fail(line_number, fmt::format("{} is missing NAME; expected {} NAMES... (names or "
                                      "ranges such as h0..h7)",
                                      directive, directive));
      }
      const NodeKind kind = directive == "host" ? NodeKind::kHost : NodeKind::kSwitch;
      for (size_t i = 1; i < words.size(); ++i) {
        for (const std::string& name : Expand(words[i], line_number)) {
          Declare(name, kind, line_number);
        }
      }
    } else if (directive == "link") {
      ParseLink(words, line_number);
    } else {
      const std::string nearest = internal::NearestName(directive, {"host", "switch", "link"});
      Fail(line_number, fmt::format("unknown directive '{}' (did you mean '{}'?); expected {}",
                                    Shortened(directive), nearest, kDirectives));
    }
  }

  void ParseLink(const std::vector<std::string_view>& words, int line_number) {
    static const char* const kFields[] = {"link", "A", "B", "RATE", "LATENCY"};
    constexpr size_t kFieldCount = std::size(kFields);
    if (words.size() < kFieldCount) {
      Fail(line_number, fmt::format("link is missing {}; expected link A B RATE LATENCY "
                                    "(e.g. link h0 s0 100Gbps 1us)",
                                    kFields[words.size()]));
    }
    if (words.size() > kFieldCount) {
      Fail(line_number, fmt::format("unexpected field '{}' after LATENCY; expected link A B "
                                    "RATE LATENCY and nothing more but a '#' comment",
                                    Shortened(words[kFieldCount])));
    }
    const std::vector<Vertex> from = Lookup(words[1], line_number);
    const std::vector<Vertex> to = Lookup(words[2], line_number);
    const size_t links = topology_.links.size();
    if (to.size() > 0 && from.size() > (kMaxLinks - links) / to.size()) {
      Fail(line_number, fmt::format("this statement makes {} x {} links and the file has {} "
                                    "already; a topology file may have at most {} links",
                                    from.size(), to.size(), links, kMaxLinks));
    }
    const double rate_bps = ParseRate(words[3], line_number);
    const double latency_s = ParseLatency(words[4], line_number);
    for (const Vertex a : from) {
      for (const Vertex b : to) {
        if (a == b) {
          Fail(line_number, fmt::format("link joins '{}' to itself; expected two different nodes",
                                        topology_.graph[a].name));
        }
        topology_.AddLink(a, b, rate_bps, latency_s);
      }
    }
  }

  std::vector<std::string> Expand(std::string_view token, int line_number) const {
    try {
      return internal::ExpandNames(token);
    } catch (const internal::NameError& e) {
      Fail(line_number, e.what());
    }
  }

  void Declare(const std::string& name, NodeKind kind, int line_number) {
    if (boost::num_vertices(topology_.graph) >= kMaxNodes) {
      Fail(line_number, fmt::format("node '{}' is one too many: a topology file may declare "
                                    "at most {} hosts and switches",
                                    Shortened(name), kMaxNodes));
    }
    if (auto it = vertex_by_name_.find(name); it != vertex_by_name_.end()) {
      Fail(line_number, fmt::format("duplicate name '{}' (first declared on line {}); "
                                    "expected every host and switch name once",
                                    Shortened(name), line_of_vertex_[it->second]));
    }
    const Vertex v = kind == NodeKind::kHost ? topology_.AddHost(name) : topology_.AddSwitch(name);
    vertex_by_name_.emplace(name, v);
    line_of_vertex_.push_back(line_number);
  }

  std::vector<Vertex> Lookup(std::string_view token, int line_number) const {
    std::vector<Vertex> vertices;
    for (const std::string& name : Expand(token, line_number)) {
      auto it = vertex_by_name_.find(name);
      if (it == vertex_by_name_.end()) {
        std::vector<std::string> declared;
        for (Vertex v = 0; v < boost::num_vertices(topology_.graph); ++v) {
          declared.push_back(topology_.graph[v].name);
        }
        const std::string nearest = internal::NearestName(name, declared);
        const std::string hint = nearest.empty() ? "no node is declared yet"
                                                 : fmt::format("did you mean '{}'?", nearest);
        Fail(line_number, fmt::format("unknown node '{}' ({}); expected a host or switch "
                                      "declared on an earlier line",
                                      Shortened(name), hint));
      }
      vertices.push_back(it->second);
    }
    return vertices;
  }

  double ParseRate(std::string_view text, int line_number) const {
    double rate_bps = 0;
    try {
      rate_bps = ParseRateBps(text);
    } catch (const UnitError& e) {
      Fail(line_number, fmt::format("bad rate '{}': {}", Shortened(text), e.what()));
    }
    // The scenario keys' range for a link rate (topology.h).
    if (!(rate_bps >= kMinLinkRateBps && rate_bps <= kMaxLinkRateBps)) {
      Fail(line_number,
           fmt::format("rate '{}' is out of range; expected a rate from 1Mbps to 10Tbps, such "
                       "as 100Gbps",
                       Shortened(text)));
    }
    return rate_bps;
  }

  double ParseLatency(std::string_view text, int line_number) const {
    double latency_s = 0;
    try {
      latency_s = ParseSeconds(text);
    } catch (const UnitError& e) {
      Fail(line_number, fmt::format("bad latency '{}': {}", Shortened(text), e.what()));
    }
    if (!(latency_s >= 0 && latency_s <= kMaxLinkLatencyS)) {
      Fail(line_number,
           fmt::format("latency '{}' is out of range; expected a duration from 0s to 1s, such "
                       "as 1us",
                       Shortened(text)));
    }
    return latency_s;
  }

  // Checks that need the whole file, reported at the line that declared the culprit.
  void CheckWholeGraph() const {
    const Graph& graph = topology_.graph;
    if (boost::num_vertices(graph) == 0) {
      Fail(1, fmt::format("the file declares no node; expected {} lines (format in "
                          "topologies/README.md)",
                          kDirectives));
    }
    if (topology_.hosts.empty()) {
      Fail(1, "the file declares no host; expected at least one 'host NAME' line");
    }
    for (const Vertex h : topology_.hosts) {
      if (boost::out_degree(h, graph) == 0) {
        Fail(line_of_vertex_[h], fmt::format("host '{}' has no link; expected every host "
                                             "linked to a switch or another host",
                                             graph[h].name));
      }
    }
    if (auto v = internal::FindVertexNotConnectedToFirst(graph)) {
      Fail(line_of_vertex_[*v],
           fmt::format("the graph is disconnected: '{}' has no path to '{}' (line {}); "
                       "expected one connected graph",
                       graph[*v].name, graph[0].name, line_of_vertex_[0]));
    }
    if (auto pair = internal::FindHostsJoinedOnlyThroughHosts(graph, topology_.hosts)) {
      const auto [a, b] = *pair;
      Fail(line_of_vertex_[b],
           fmt::format("host '{}' reaches host '{}' (line {}) only through other hosts; "
                       "expected a path through switches (hosts do not forward traffic)",
                       graph[b].name, graph[a].name, line_of_vertex_[a]));
    }
    try {
      topology_.Validate();  // a last net: the checks above should have caught everything
    } catch (const std::invalid_argument& e) {
      throw TopologyFileError(fmt::format("{}: {}", path_, e.what()));
    }
  }

  std::string path_;
  Topology topology_;
  std::map<std::string, Vertex, std::less<>> vertex_by_name_;
  std::vector<int> line_of_vertex_;  // vertex -> line that declared it
};

}  // namespace

Topology LoadTopologyFile(const std::string& path) {
  return TopologyFileParser(path).Parse();
}

}  // namespace nbox::topo
