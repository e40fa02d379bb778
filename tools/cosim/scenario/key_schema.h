// The one table of scenario sections and keys. The parser, the cross-key rules, the settings
// report and the generated docs (ScenarioKeysMarkdown) all read it, so they cannot disagree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

struct SectionSpec {
  std::string name;     // "network"
  std::string meaning;  // one line
};

struct KeySpec {
  std::string section;  // "network"
  std::string name;     // "mtu"
  std::string meaning;  // one line
  ValueKind value;

  std::string FullName() const { return section + "." + name; }  // "network.mtu"
};

// Sections in the order the docs list them.
const std::vector<SectionSpec>& ScenarioSections();
// Every key, grouped by section in ScenarioSections() order.
const std::vector<KeySpec>& ScenarioKeys();

std::vector<std::string> SectionNames();
std::vector<std::string> KeyNames(std::string_view section);
bool IsSection(std::string_view section);
// nullptr when there is no such key in that section.
const KeySpec* FindKey(std::string_view section, std::string_view name);
// By "section.key"; the key must exist (a programming error otherwise).
const KeySpec& KeyByFullName(std::string_view full_name);
// A key's value in `scenario` as the scenario file spells it ("1f1b", "mirror"): what reports
// and the real ranks' environment print of a typed choice.
std::string SettingText(const Scenario& scenario, std::string_view full_name);

}  // namespace nbox::scenario
