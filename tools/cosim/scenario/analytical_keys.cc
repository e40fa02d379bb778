#include "tools/cosim/scenario/analytical_keys.h"

#include <string>

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

// Ranges are the ns-3 attributes' (NboxAnalyticalTransport): a factor far from 1 means the
// alpha-beta form does not describe the operation on this network, not a value to trust.
std::vector<KeySpec> AnalyticalKeys() {
  auto analytical = [](auto member) { return FieldOf(&Scenario::analytical, member); };
  auto meaning = [](const std::string& op) {
    return "analytical model: effective-bandwidth factor C of " + op +
           " (its bandwidth term is divided by C; 1 = the ideal bottleneck rate; "
           "tools/nbox-fit-analytical fits it from packet or flow runs)";
  };
  return {
      {"analytical", "allreduce_factor", meaning("all-reduce"),
       Real(analytical(&AnalyticalSection::allreduce_factor), 0.01, 10)},
      {"analytical", "allgather_factor", meaning("all-gather"),
       Real(analytical(&AnalyticalSection::allgather_factor), 0.01, 10)},
      {"analytical", "reducescatter_factor", meaning("reduce-scatter"),
       Real(analytical(&AnalyticalSection::reducescatter_factor), 0.01, 10)},
      {"analytical", "broadcast_factor", meaning("broadcast"),
       Real(analytical(&AnalyticalSection::broadcast_factor), 0.01, 10)},
      {"analytical", "reduce_factor", meaning("reduce"),
       Real(analytical(&AnalyticalSection::reduce_factor), 0.01, 10)},
      {"analytical", "alltoall_factor", meaning("all-to-all"),
       Real(analytical(&AnalyticalSection::alltoall_factor), 0.01, 10)},
      {"analytical", "p2p_factor", meaning("point-to-point transfers"),
       Real(analytical(&AnalyticalSection::p2p_factor), 0.01, 10)},
  };
}

}  // namespace nbox::scenario
