#include "tools/cosim/network_models.h"

#include <stdexcept>

#include "tools/cosim/network_models/analytical_model.h"
#include "tools/cosim/network_models/flow_model.h"
#include "tools/cosim/network_models/packet_model.h"

namespace nbox::cosim {

const std::vector<NetworkModel>& NetworkModels() {
  static const std::vector<NetworkModel> models = {PacketModel(), FlowModel(), AnalyticalModel()};
  return models;
}

const NetworkModel& NetworkModelOf(const scenario::Scenario& s) {
  for (const NetworkModel& model : NetworkModels()) {
    if (model.name == s.network.model) return model;
  }
  throw std::invalid_argument("unknown network.model '" + s.network.model + "'");
}

void CheckNetworkModel(scenario::RuleContext& context) {
  const NetworkModel& model = NetworkModelOf(context.scenario());
  if (model.check != nullptr) model.check(context);
}

void CheckBuiltTopology(const scenario::Scenario& s, const topo::Topology& topology) {
  const NetworkModel& model = NetworkModelOf(s);
  if (model.check_topology != nullptr) model.check_topology(s, topology);
}

BuiltNetwork BuildNetworkModel(const scenario::Scenario& s, const topo::Topology& topology,
                               const std::vector<int>& rank_to_host) {
  return NetworkModelOf(s).build(s, topology, rank_to_host);
}

}  // namespace nbox::cosim
