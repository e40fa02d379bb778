// What the cross-key rules (cross_key_rules.h) read the scenario and the keys' origins
// through, and where they record what they find.
#pragma once

#include <fmt/format.h>

#include <filesystem>
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
  // The folder a key's relative path starts at: its job file's, or the scenario's.
  std::filesystem::path FolderOf(const std::string& full_name,
                                 const std::filesystem::path& scenario_folder) const {
    const auto found = origins_.find(full_name);
    if (found == origins_.end() || found->second.file.empty()) return scenario_folder;
    return std::filesystem::path(found->second.file).parent_path();
  }

  // "topology.leaves = 4 (default)", with the value as the settings report would show it.
  std::string Describe(const std::string& full_name) const {
    const KeySpec& key = KeyByFullName(full_name);
    std::string origin = "default";
    const auto found = origins_.find(full_name);
    if (found != origins_.end()) {
      const KeyOrigin& from = found->second;
      origin = from.line == 0      ? "--set"
               : from.file.empty() ? fmt::format("line {}", from.line)
                                   : fmt::format("{} line {}", from.file, from.line);
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
