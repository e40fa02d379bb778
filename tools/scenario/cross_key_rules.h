// Rules between keys, checked once the file and the overrides are all read, and the values
// derived from other keys (fabric_link from oversubscription, the topology file's path).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tools/scenario/scenario.h"

namespace nbox::scenario {

// Where a key's value came from; keys absent from KeyOrigins kept their default.
struct KeyOrigin {
  int line = 0;  // line in the scenario file; 0 = from an override
};
using KeyOrigins = std::map<std::string, KeyOrigin>;  // "section.key" -> origin

// Derives the dependent values in `scenario` and checks every rule between keys. Returns one
// message per broken rule, naming each key with its value and origin:
// "network.tcp_cc = dctcp (line 4) requires network.ecn = on, got network.ecn = off (default)".
// `scenario_folder` is where a relative topology.file starts.
std::vector<std::string> ApplyCrossKeyRules(Scenario& scenario, const KeyOrigins& origins,
                                            const std::filesystem::path& scenario_folder);

}  // namespace nbox::scenario
