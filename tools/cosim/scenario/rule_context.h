// What the cross-key rules (cross_key_rules.h) read the scenario and the keys' origins
// through, and where they record what they find.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "tools/cosim/scenario/cross_key_rules.h"
#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {

// The rules read the scenario and the origins through this, and record what they find.
class RuleContext {
 public:
  RuleContext(Scenario& scenario, const KeyOrigins& origins)
      : scenario_(scenario), origins_(origins) {}

  Scenario& scenario() { return scenario_; }
  bool Given(const std::string& full_name) const { return origins_.count(full_name) > 0; }

  // "topology.leaves = 4 (default)", with the value as the settings report would show it.
  std::string Describe(const std::string& full_name) const {
    const KeySpec& key = KeyByFullName(full_name);
    std::string origin = "default";
    const auto found = origins_.find(full_name);
    if (found != origins_.end()) {
      origin = found->second.line > 0 ? fmt::format("line {}", found->second.line) : "--set";
    }
    return fmt::format("{} = {} ({})", full_name, key.value.format(scenario_), origin);
  }

  void Fail(std::string message) { messages_.push_back(std::move(message)); }
  std::vector<std::string> TakeMessages() { return std::move(messages_); }

 private:
  Scenario& scenario_;
  const KeyOrigins& origins_;
  std::vector<std::string> messages_;
};

}  // namespace nbox::scenario
