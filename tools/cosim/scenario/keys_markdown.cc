// ScenarioKeysMarkdown: the key tables of scenarios/README.md, from the schema.
#include <fmt/format.h>

#include <string>

#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario {
namespace {

// Text safe inside a Markdown table cell.
std::string Cell(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') cell += '\\';
    cell += c;
  }
  return cell;
}

}  // namespace

std::string ScenarioKeysMarkdown() {
  const Scenario defaults;
  std::string markdown;
  for (const SectionSpec& section : ScenarioSections()) {
    markdown += fmt::format("### [{}]\n\n{}\n\n", section.name, section.meaning);
    markdown += "| Key | Default | Expected | Meaning |\n";
    markdown += "|-----|---------|----------|---------|\n";
    for (const KeySpec& key : ScenarioKeys()) {
      if (key.section != section.name) continue;
      const std::string default_text = key.value.format(defaults);
      markdown += fmt::format("| `{}` | {} | {} | {} |\n", key.name,
                              default_text.empty() ? "(empty)" : "`" + default_text + "`",
                              Cell(key.value.expected), Cell(key.meaning));
    }
    markdown += "\n";
  }
  markdown.pop_back();  // one newline at the end, not a blank line
  return markdown;
}

}  // namespace nbox::scenario
