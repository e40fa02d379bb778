#include "tools/cosim/assembly/timed_changes.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "tools/cosim/scenario/nearest_name.h"
#include "tools/cosim/scenario/timed_change_values.h"

namespace nbox::cosim {
namespace {

using scenario::TimedChange;

void CheckNodeExists(const scenario::Scenario& s, const topo::Topology& topology,
                     const TimedChange& change, const std::string& name) {
  std::vector<std::string> names;
  for (const topo::Vertex v : boost::make_iterator_range(boost::vertices(topology.graph))) {
    if (topology.graph[v].name == name) return;
    names.push_back(topology.graph[v].name);
  }
  const std::string nearest = scenario::NearestName(name, names);
  throw std::invalid_argument(
      fmt::format("{}: [events] at = '{}': the topology ({}) has no node named '{}'{}", s.path,
                  scenario::TimedChangeText(change), topology.description, name,
                  nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest)));
}

}  // namespace

std::vector<ResolvedChange> ResolveTimedChanges(const scenario::Scenario& s,
                                                const topo::Topology& topology) {
  std::vector<ResolvedChange> resolved;
  for (const TimedChange& change : s.events.changes) {
    ResolvedChange r{change, {}};
    if (change.kind == TimedChange::Kind::kLinkRate) {
      CheckNodeExists(s, topology, change, change.node_a);
      CheckNodeExists(s, topology, change, change.node_b);
      for (const topo::Edge& edge : topology.links) {
        const std::string& from = topology.graph[boost::source(edge, topology.graph)].name;
        const std::string& to = topology.graph[boost::target(edge, topology.graph)].name;
        if ((from == change.node_a && to == change.node_b) ||
            (from == change.node_b && to == change.node_a)) {
          const uint32_t link = topology.graph[edge].id;
          r.ports.push_back(2 * link);
          r.ports.push_back(2 * link + 1);
        }
      }
      if (r.ports.empty()) {
        throw std::invalid_argument(fmt::format(
            "{}: [events] at = '{}': no link joins '{}' and '{}' in the topology ({})", s.path,
            scenario::TimedChangeText(change), change.node_a, change.node_b, topology.description));
      }
    }
    resolved.push_back(std::move(r));
  }
  return resolved;
}

void ScheduleTimedChanges(const std::vector<ResolvedChange>& changes,
                          const std::vector<double>& fleet_factors,
                          ns3::Ptr<ns3::NboxNetworkModel> model, ns3::Ptr<ns3::NboxJob> job) {
  for (const ResolvedChange& r : changes) {
    const TimedChange& change = r.change;
    const ns3::Time at = ns3::Seconds(change.at_s);
    if (change.kind == TimedChange::Kind::kLinkRate) {
      ns3::Simulator::Schedule(at, [model, ports = r.ports, rate = change.rate_bps] {
        for (uint32_t port : ports) model->SetPortRate(port, rate);
      });
      continue;
    }
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
  }
}

}  // namespace nbox::cosim
