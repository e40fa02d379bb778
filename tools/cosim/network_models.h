// The network models a scenario can run on (network.model), behind one seam: each builds,
// from the topology, an NboxNetworkModel (per-port counters for the report) and an
// NboxTransport (messages between ranks, delivery callbacks) that the job runtime uses
// without knowing which model it is (docs/DESIGN.md, "Network models").
//
// Each model is a plugin in network_models/, beside the others: how it is built, what its
// build and its connections hold in memory (measured), how the report names it, which
// settings are its own and what it cannot run (its checks). Adding a model is its file there and
// one line in NetworkModels(); the network.model key lists the same names (a test holds them
// equal).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ns3/nbox-network-model.h"
#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "tools/cosim/scenario/rule_context.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

struct BuiltNetwork {
  ns3::Ptr<ns3::NboxNetworkModel> model;
  ns3::Ptr<ns3::NboxTransport> transport;
  // The packet model's ns-3 network (nodes, devices), for tools that need packets; null for
  // the other models.
  ns3::Ptr<ns3::NboxNetwork> packet;
};

inline constexpr double kNetworkMiB = 1 << 20;  // the unit the costs below are measured in

// What one network build costs: a fixed part (the process, ns-3's libraries), a part per link
// and a part per route entry. Measured by tools/bench/nbox-bench-memory (peak memory of
// `--check` on fat-trees of k = 4 .. 40, least squares; figures in tools/bench/README.md).
struct NetworkMemoryCost {
  double base_bytes;
  double bytes_per_link;
  double bytes_per_route;
};

// What one connection holds while a job runs (memory_estimate.h): one that carries messages
// (its state in the model, what it has in flight) and one opened up front that never carries
// any (a pair an all-to-all-v sends nothing to).
struct ConnectionMemoryCost {
  double carrying_bytes;
  double idle_bytes;
};

// A setting's text as the run used it ("network.mtu" -> "9000"), for the report's wording.
using SettingText = std::function<std::string(const std::string& key)>;

struct NetworkModel {
  std::string name;  // the value of network.model
  BuiltNetwork (*build)(const scenario::Scenario& scenario, const topo::Topology& topology,
                        const std::vector<int>& rank_to_host);
  NetworkMemoryCost (*memory_cost)(const scenario::Scenario& scenario);
  // The route entries its build keeps for `topology` (what bytes_per_route multiplies).
  uint64_t (*route_entries)(const scenario::Scenario& scenario, const topo::Topology& topology);
  // Measured bytes per connection while a job runs (memory_estimate.h).
  ConnectionMemoryCost (*connection_cost)(const scenario::Scenario& scenario);
  // The report's line for it, after "network    ".
  std::string (*describe)(const SettingText& setting);
  // The scenario section only this model reads, left out of other models' results ("" none).
  std::string own_section;
  // What the model cannot run, refused when the scenario loads (context.Fail, naming the
  // keys), and once the topology is built (throws std::invalid_argument); null: nothing.
  void (*check)(scenario::RuleContext& context) = nullptr;
  void (*check_topology)(const scenario::Scenario& scenario,
                         const topo::Topology& topology) = nullptr;
};

// Every model, in the order the key documents them.
const std::vector<NetworkModel>& NetworkModels();

// The scenario's network.model. Throws std::invalid_argument for an unknown model.
const NetworkModel& NetworkModelOf(const scenario::Scenario& scenario);

// The scenario's network.model's checks: what LoadScenario adds to the scenario's own rules
// (scenario::ScenarioRule) wherever nbox-cosim loads a scenario.
void CheckNetworkModel(scenario::RuleContext& context);

// The model's checks of the built topology (before its network is built).
void CheckBuiltTopology(const scenario::Scenario& scenario, const topo::Topology& topology);

// Builds the scenario's network.model.
BuiltNetwork BuildNetworkModel(const scenario::Scenario& scenario, const topo::Topology& topology,
                               const std::vector<int>& rank_to_host);

}  // namespace nbox::cosim
