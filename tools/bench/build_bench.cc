// nbox-bench-build: how long building the network of a scenario takes and how much memory it
// holds, phase by phase: the graph (builder and Validate), the equal-cost routes, and the
// ns-3 network (nodes, links, queues, routing tables). The job (ranks, communicators) is not
// built: `nbox-cosim --check` measures everything together (tools/bench/build-scaling.sh).
//
// Per phase it prints the wall time, the resident memory after the phase and the peak resident
// memory during the phase (Linux's VmHWM, reset between phases through /proc/self/clear_refs).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/nbox-network-helper.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/network_models/packet_model.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Memory {
  long rss_kib = 0;   // VmRSS: resident now
  long peak_kib = 0;  // VmHWM: highest resident since the last reset
};

Memory ReadMemory() {
  Memory m;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {  // lines such as "VmRSS:\t  123456 kB"
    if (line.rfind("VmRSS:", 0) == 0) m.rss_kib = std::stol(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) m.peak_kib = std::stol(line.substr(6));
  }
  return m;
}

// Starts a new peak: VmHWM drops to the current resident size (Linux >= 4.0).
void ResetPeak() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

struct Phase {
  std::string name;
  double wall_s = 0;
  Memory memory;
};

// Runs `work` as one measured phase.
template <typename Work>
Phase Measure(const std::string& name, Work&& work) {
  ResetPeak();
  const auto start = Clock::now();
  work();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return Phase{name, wall_s, ReadMemory()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nbox-bench-build: time and memory of building a scenario's network, per phase"};
  std::string path;
  std::vector<std::string> overrides;
  bool json = false;
  app.add_option("scenario", path, "scenario file")->required();
  app.add_option("--set", overrides, "override a scenario key (section.key=value)");
  app.add_flag("--json", json, "print the figures as JSON instead of a table");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto scenario =
        nbox::scenario::LoadScenario(path, overrides, {nbox::cosim::CheckNetworkModel});
    const Memory start = ReadMemory();
    nbox::topo::Topology topology;
    nbox::topo::Routes routes;
    ns3::Ptr<ns3::NboxNetwork> network;
    std::vector<Phase> phases;
    phases.push_back(Measure("graph", [&] {
      topology = nbox::cosim::BuildTopology(scenario);
      topology.Validate();
    }));
    phases.push_back(
        Measure("routes", [&] { routes = nbox::topo::ComputeEqualCostRoutes(topology); }));
    phases.push_back(Measure("network", [&] {
      // Install validates the topology again and checks that the routes fit it.
      network = ns3::NboxNetworkHelper(nbox::cosim::MakeNetworkConfig(scenario))
                    .Install(topology, routes);
    }));

    if (json) {
      nlohmann::ordered_json out;
      out["topology"] = topology.description;
      out["hosts"] = topology.hosts.size();
      out["vertices"] = boost::num_vertices(topology.graph);
      out["links"] = topology.links.size();
      out["start_rss_kib"] = start.rss_kib;
      out["route_sets"] = routes.set_count();
      out["route_table_bytes"] = routes.MemoryBytes();
      for (const Phase& p : phases) {
        out["phases"][p.name] = {{"wall_s", p.wall_s},
                                 {"rss_kib", p.memory.rss_kib},
                                 {"peak_rss_kib", p.memory.peak_kib}};
      }
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << fmt::format("{} ({} hosts, {} vertices, {} links)\n", topology.description,
                               topology.hosts.size(), boost::num_vertices(topology.graph),
                               topology.links.size());
      std::cout << fmt::format("{:<8} {:>9} {:>14} {:>15}\n", "phase", "wall s", "RSS after MiB",
                               "phase peak MiB");
      std::cout << fmt::format("{:<8} {:>9} {:>14.1f} {:>15}\n", "start", "",
                               start.rss_kib / 1024.0, "");
      for (const Phase& p : phases) {
        std::cout << fmt::format("{:<8} {:>9.3f} {:>14.1f} {:>15.1f}\n", p.name, p.wall_s,
                                 p.memory.rss_kib / 1024.0, p.memory.peak_kib / 1024.0);
      }
      std::cout << fmt::format("routes: {} distinct next-hop sets, tables {:.2f} MiB\n",
                               routes.set_count(), routes.MemoryBytes() / 1048576.0);
    }
  } catch (const std::exception& e) {
    std::cerr << "nbox-bench-build: " << e.what() << "\n";
    ns3::Simulator::Destroy();
    return 1;
  }
  ns3::Simulator::Destroy();
  return 0;
}
