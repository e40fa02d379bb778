// nbox-scenario-docs: prints the scenario key tables (ScenarioKeysMarkdown), or with
// --update <README.md> rewrites the part of that file between <!-- keys:begin --> and
// <!-- keys:end --> so the docs follow the schema.
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/cosim/scenario/scenario.h"

namespace {

constexpr std::string_view kBegin = "<!-- keys:begin -->\n";
constexpr std::string_view kEnd = "<!-- keys:end -->";

int Update(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << fmt::format("nbox-scenario-docs: cannot read '{}'\n", path);
    return 1;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const size_t begin = text.find(kBegin);
  const size_t end = begin == std::string::npos ? begin : text.find(kEnd, begin);
  if (end == std::string::npos) {
    std::cerr << fmt::format("nbox-scenario-docs: '{}' has no {} ... {} markers\n", path,
                             kBegin.substr(0, kBegin.size() - 1), kEnd);
    return 1;
  }
  const size_t first = begin + kBegin.size();
  text.replace(first, end - first, nbox::scenario::ScenarioKeysMarkdown());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) {
    std::cerr << fmt::format("nbox-scenario-docs: cannot write '{}'\n", path);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 1) {
    std::cout << nbox::scenario::ScenarioKeysMarkdown();
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--update") == 0) return Update(argv[2]);
  std::cerr << "usage: nbox-scenario-docs [--update scenarios/README.md]\n";
  return 2;
}
