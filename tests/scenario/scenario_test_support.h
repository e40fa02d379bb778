// Helpers shared by the scenario tests. Tests run from the repository root.
#pragma once

#include <string>
#include <vector>

#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario::testing {

inline std::string Fixture(const std::string& name) {
  return "tests/scenario/fixtures/" + name;
}

// The ScenarioError message of loading `path` with `overrides`, or "" when it loads.
inline std::string LoadError(const std::string& path,
                             const std::vector<std::string>& overrides = {},
                             const std::vector<ScenarioRule>& more_rules = {}) {
  try {
    LoadScenario(path, overrides, more_rules);
  } catch (const ScenarioError& error) {
    return error.what();
  }
  return "";
}

}  // namespace nbox::scenario::testing
