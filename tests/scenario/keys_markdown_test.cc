// The key tables in scenarios/README.md are ScenarioKeysMarkdown() exactly, and the tables
// describe what the parser does.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "scenario_test_support.h"
#include "tools/cosim/scenario/key_schema.h"

namespace nbox::scenario {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(KeysMarkdown, ReadmeTablesMatchTheSchema) {
  const std::string readme = ReadFile("scenarios/README.md");
  const std::string begin = "<!-- keys:begin -->\n";
  const std::string end = "<!-- keys:end -->";
  const size_t first = readme.find(begin);
  ASSERT_NE(first, std::string::npos) << "scenarios/README.md lacks " << begin;
  const size_t last = readme.find(end, first);
  ASSERT_NE(last, std::string::npos) << "scenarios/README.md lacks " << end;
  const std::string documented = readme.substr(first + begin.size(), last - first - begin.size());
  EXPECT_EQ(documented, ScenarioKeysMarkdown())
      << "scenarios/README.md is out of date with the scenario schema. Regenerate it with\n"
         "  cmake --build <build dir> --target update-scenario-docs\n"
         "and commit the result.";
}

TEST(KeysMarkdown, OneRowPerKeyWithDefaultAndExpectedValues) {
  const std::string markdown = ScenarioKeysMarkdown();
  EXPECT_NE(markdown.find("### [network]\n"), std::string::npos);
  EXPECT_NE(markdown.find("| `mtu` | `1500` | a whole number of bytes from 576 to 9216 | "
                          "largest IP packet on every link |\n"),
            std::string::npos);
  EXPECT_NE(markdown.find("| `dir` | (empty) | a folder path |"), std::string::npos);
  size_t rows = 0;
  for (size_t at = markdown.find("\n| `"); at != std::string::npos;
       at = markdown.find("\n| `", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, ScenarioKeys().size());
}

TEST(KeySchema, NamesAreUniqueLowercaseAndEverySectionHasKeys) {
  std::set<std::string> seen;
  for (const KeySpec& key : ScenarioKeys()) {
    EXPECT_TRUE(seen.insert(key.FullName()).second) << key.FullName();
    EXPECT_TRUE(IsSection(key.section)) << key.FullName();
    EXPECT_EQ(key.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
              std::string::npos)
        << key.FullName();
    EXPECT_FALSE(key.meaning.empty()) << key.FullName();
    EXPECT_FALSE(key.value.expected.empty()) << key.FullName();
  }
  for (const std::string& section : SectionNames()) {
    EXPECT_FALSE(KeyNames(section).empty()) << section;
  }
}

TEST(KeySchema, EveryDefaultTextReadsBackToTheDefault) {
  const Scenario defaults;
  for (const KeySpec& key : ScenarioKeys()) {
    const std::string text = key.value.format(defaults);
    Scenario parsed;
    ASSERT_TRUE(key.value.parse(text, parsed)) << key.FullName() << " = '" << text << "'";
    EXPECT_EQ(key.value.format(parsed), text) << key.FullName();
  }
}

}  // namespace
}  // namespace nbox::scenario
