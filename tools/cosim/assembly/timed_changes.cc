#include "tools/cosim/assembly/timed_changes.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "tools/cosim/scenario/nearest_name.h"
#include "tools/cosim/scenario/timed_change_values.h"

namespace nbox::cosim {
namespace {

using scenario::TimedChange;

std::string Where(const scenario::Scenario& s, const TimedChange& change) {
  return fmt::format("{}: [events] at = '{}'", s.path, scenario::TimedChangeText(change));
}

topo::Vertex NodeNamed(const scenario::Scenario& s, const topo::Topology& topology,
                       const TimedChange& change, const std::string& name) {
  std::vector<std::string> names;
  for (const topo::Vertex v : boost::make_iterator_range(boost::vertices(topology.graph))) {
    if (topology.graph[v].name == name) return v;
    names.push_back(topology.graph[v].name);
  }
  const std::string nearest = scenario::NearestName(name, names);
  throw std::invalid_argument(fmt::format(
      "{}: the topology ({}) has no node named '{}'{}", Where(s, change), topology.description,
      name, nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest)));
}

// The links a link or switch change acts on, in ascending id.
std::vector<uint32_t> LinksOf(const scenario::Scenario& s, const topo::Topology& topology,
                              const TimedChange& change) {
  const topo::Graph& graph = topology.graph;
  const topo::Vertex a = NodeNamed(s, topology, change, change.node_a);
  std::vector<uint32_t> links;
  if (change.node_b.empty()) {
    if (graph[a].kind != topo::NodeKind::kSwitch) {
      throw std::invalid_argument(fmt::format(
          "{}: '{}' is a host, not a switch; take its links down one by one ('link {} NODE "
          "down')",
          Where(s, change), change.node_a, change.node_a));
    }
    for (auto [e, end] = boost::out_edges(a, graph); e != end; ++e) links.push_back(graph[*e].id);
  } else {
    const topo::Vertex b = NodeNamed(s, topology, change, change.node_b);
    for (auto [e, end] = boost::out_edges(a, graph); e != end; ++e) {
      if (boost::target(*e, graph) == b) links.push_back(graph[*e].id);
    }
    if (links.empty()) {
      throw std::invalid_argument(
          fmt::format("{}: no link joins '{}' and '{}' in the topology ({})", Where(s, change),
                      change.node_a, change.node_b, topology.description));
    }
  }
  std::sort(links.begin(), links.end());
  return links;
}

// Walks the failures and repairs in time order (as given, for equal times), giving each the
// links down after it; refuses one that cuts the job's hosts apart.
void ResolveFailures(const scenario::Scenario& s, const topo::Topology& topology,
                     const std::vector<int>& rank_to_host, std::vector<ResolvedChange>& resolved) {
  std::vector<size_t> order(resolved.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return resolved[x].change.at_s < resolved[y].change.at_s;
  });
  std::set<size_t> job_hosts(rank_to_host.begin(), rank_to_host.end());
  const std::vector<size_t> hosts(job_hosts.begin(), job_hosts.end());
  std::set<uint32_t> failed;
  for (size_t i : order) {
    ResolvedChange& r = resolved[i];
    const TimedChange::Kind kind = r.change.kind;
    if (kind != TimedChange::Kind::kLinksDown && kind != TimedChange::Kind::kLinksUp) continue;
    for (uint32_t port : r.ports) {
      if (kind == TimedChange::Kind::kLinksDown) {
        failed.insert(port / 2);
      } else {
        failed.erase(port / 2);
      }
    }
    r.failed_after.assign(failed.begin(), failed.end());
    if (const auto cut = topo::FindHostsCutOff(topology, r.failed_after, hosts)) {
      const auto name = [&](size_t host) {
        const auto rank = std::find(rank_to_host.begin(), rank_to_host.end(), host);
        return fmt::format("{} (rank {})", topology.graph[topology.hosts[host]].name,
                           rank - rank_to_host.begin());
      };
      throw std::invalid_argument(fmt::format(
          "{}: with the links down then, {} and {} are cut off from each other, and the job "
          "could not finish; fail fewer links, or bring some back first",
          Where(s, r.change), name(cut->first), name(cut->second)));
    }
  }
}

}  // namespace

std::vector<ResolvedChange> ResolveTimedChanges(const scenario::Scenario& s,
                                                const topo::Topology& topology,
                                                const std::vector<int>& rank_to_host) {
  std::vector<ResolvedChange> resolved;
  for (const TimedChange& change : s.events.changes) {
    ResolvedChange r{change, {}, {}};
    if (change.kind != TimedChange::Kind::kGpuSlowdown) {
      for (uint32_t link : LinksOf(s, topology, change)) {
        r.ports.push_back(2 * link);
        r.ports.push_back(2 * link + 1);
      }
    }
    resolved.push_back(std::move(r));
  }
  ResolveFailures(s, topology, rank_to_host, resolved);
  return resolved;
}

void ScheduleTimedChanges(const std::vector<ResolvedChange>& changes,
                          const std::vector<double>& fleet_factors, const topo::Topology& topology,
                          ns3::Ptr<ns3::NboxNetworkModel> model, ns3::Ptr<ns3::NboxJob> job) {
  std::shared_ptr<const topo::Topology> kept;  // copied once, if a failure needs routes
  for (const ResolvedChange& r : changes) {
    const TimedChange& change = r.change;
    const ns3::Time at = ns3::Seconds(change.at_s);
    switch (change.kind) {
      case TimedChange::Kind::kLinkRate:
        ns3::Simulator::Schedule(at, [model, ports = r.ports, rate = change.rate_bps] {
          for (uint32_t port : ports) model->SetPortRate(port, rate);
        });
        break;
      case TimedChange::Kind::kLinksDown:
      case TimedChange::Kind::kLinksUp:
        if (!kept) kept = std::make_shared<const topo::Topology>(topology);
        ns3::Simulator::Schedule(at, [model, kept, failed = r.failed_after] {
          // Routes as the fabric converges to them; computed when needed, not held all run.
          auto routes =
              std::make_shared<const topo::Routes>(topo::ComputeEqualCostRoutes(*kept, failed));
          model->SetFailedLinks(failed, std::move(routes));
        });
        break;
      case TimedChange::Kind::kGpuSlowdown:
        for (int rank : change.ranks) {
          const double fleet =
              fleet_factors.empty() ? 1.0 : fleet_factors.at(static_cast<size_t>(rank));
          ns3::Simulator::Schedule(at, [job, rank, factor = fleet * change.slowdown] {
            // The rules refuse a real rank; a rank with no app has nothing to slow.
            if (auto app = job->GetRankApp(static_cast<uint32_t>(rank))) {
              app->SetComputeTimeFactor(factor);
            }
          });
        }
        break;
    }
  }
}

}  // namespace nbox::cosim
