// INI reading: every entry and header carries the line it was on.
#include "tools/cosim/scenario/ini_document.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbox::scenario {
namespace {

TEST(ParseIni, EntriesAndHeadersKnowTheirLines) {
  const IniDocument document = ParseIni(
      "; comment\n"          // 1
      "# another comment\n"  // 2
      "\n"                   // 3
      "[job]\n"              // 4
      "world_size = 4\n"     // 5
      "\n"                   // 6
      "[network]\n"          // 7
      "mtu: 9000\n"          // 8
      "ecn=on\n");           // 9
  ASSERT_EQ(document.headers.size(), 2u);
  EXPECT_EQ(document.headers[0].name, "job");
  EXPECT_EQ(document.headers[0].line, 4);
  EXPECT_EQ(document.headers[1].name, "network");
  EXPECT_EQ(document.headers[1].line, 7);
  ASSERT_EQ(document.entries.size(), 3u);
  EXPECT_EQ(document.entries[0].section, "job");
  EXPECT_EQ(document.entries[0].key, "world_size");
  EXPECT_EQ(document.entries[0].value, "4");
  EXPECT_EQ(document.entries[0].line, 5);
  EXPECT_EQ(document.entries[1].key, "mtu");
  EXPECT_EQ(document.entries[1].value, "9000");
  EXPECT_EQ(document.entries[1].line, 8);
  EXPECT_EQ(document.entries[2].key, "ecn");
  EXPECT_EQ(document.entries[2].value, "on");
  EXPECT_EQ(document.entries[2].line, 9);
  EXPECT_TRUE(document.problems.empty());
}

TEST(ParseIni, IndentedLinesAreNotContinuations) {
  const IniDocument document = ParseIni("[job]\nworld_size = 4\n    seed = 3\n\tseed2 = 5\n");
  ASSERT_EQ(document.entries.size(), 3u);
  EXPECT_EQ(document.entries[0].value, "4");
  EXPECT_EQ(document.entries[1].key, "seed");
  EXPECT_EQ(document.entries[1].line, 3);
  EXPECT_EQ(document.entries[2].key, "seed2");
  EXPECT_EQ(document.entries[2].line, 4);
}

TEST(ParseIni, InlineCommentsNeedASpaceAndASemicolon) {
  const IniDocument document = ParseIni("[n]\na = 1 ; one\nb = 2;two\nc = 3 # three\n");
  ASSERT_EQ(document.entries.size(), 3u);
  EXPECT_EQ(document.entries[0].value, "1");
  EXPECT_EQ(document.entries[1].value, "2;two");
  EXPECT_EQ(document.entries[2].value, "3 # three");
}

TEST(ParseIni, WindowsLineEndsByteOrderMarkAndNoFinalNewline) {
  const IniDocument document = ParseIni("\xEF\xBB\xBF[job]\r\nseed = 7\r\nworld_size = 2");
  ASSERT_EQ(document.headers.size(), 1u);
  EXPECT_EQ(document.headers[0].name, "job");
  ASSERT_EQ(document.entries.size(), 2u);
  EXPECT_EQ(document.entries[0].value, "7");
  EXPECT_EQ(document.entries[1].value, "2");
  EXPECT_EQ(document.entries[1].line, 3);
}

TEST(ParseIni, SpacesInsideBracketsAreNotPartOfTheSectionName) {
  const IniDocument document = ParseIni("[ job ] ; the job\nseed = 1\n");
  ASSERT_EQ(document.headers.size(), 1u);
  EXPECT_EQ(document.headers[0].name, "job");
  ASSERT_EQ(document.entries.size(), 1u);
  EXPECT_EQ(document.entries[0].section, "job");
}

TEST(ParseIni, KeysBeforeAnyHeaderHaveAnEmptySection) {
  const IniDocument document = ParseIni("seed = 1\n[job]\n");
  ASSERT_EQ(document.entries.size(), 1u);
  EXPECT_EQ(document.entries[0].section, "");
  EXPECT_EQ(document.entries[0].line, 1);
}

TEST(ParseIni, ReportsTheFirstMalformedLine) {
  const IniDocument document = ParseIni("[job]\nseed = 1\nno equals here\n[broken\n");
  ASSERT_EQ(document.problems.size(), 1u);
  EXPECT_EQ(document.problems[0].line, 3);
  EXPECT_EQ(document.problems[0].message,
            "expected [section], key = value or a comment, got 'no equals here'");
  ASSERT_EQ(document.entries.size(), 1u);
}

TEST(ParseIni, ReportsOverlongLinesAndKeepsCounting) {
  const std::string long_value(300, 'x');
  const IniDocument document = ParseIni("[output]\ndir = " + long_value + "\ntrace = none\n");
  ASSERT_EQ(document.problems.size(), 1u);
  EXPECT_EQ(document.problems[0].line, 2);
  EXPECT_EQ(document.problems[0].message.rfind("line is longer than ", 0), 0u);
  ASSERT_EQ(document.entries.size(), 1u);
  EXPECT_EQ(document.entries[0].key, "trace");
  EXPECT_EQ(document.entries[0].line, 3);
}

// Input that another reader would split or end differently is refused, naming the
// line, instead of silently dropping the rest.
TEST(ParseIni, TextAfterASectionHeaderIsAnError) {
  const IniDocument document = ParseIni("[job] world_size = 3\n[network] ; a comment is fine\n");
  ASSERT_EQ(document.problems.size(), 1u);
  EXPECT_EQ(document.problems[0].line, 1);
  EXPECT_EQ(document.problems[0].message,
            "text after the section header: 'world_size = 3'; put each key on a line of its own");
}

TEST(ParseIni, OnlyNewlineAndCrLfEndALine) {
  struct Case {
    std::string text;
    int line;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"[job]\rworld_size = 0\r[netwrk]\r", 1, "a control character (byte 0x0D) at column 6"},
      {"[job]\nworld_size = 4\fseed = 2\n", 2, "a control character (byte 0x0C) at column 15"},
      {"[job]\vworld_size = 0\n", 1, "a control character (byte 0x0B) at column 6"},
      {std::string("[job]\nworld_size = 4\0junk\n", 26), 2,
       "a control character (byte 0x00) at column 15"},
      {"[job]\xC2\x85world_size = 0\n", 1, "a NEL line separator at column 6"},
      {"[job]\x85world_size = 0\n", 1, "a NEL line separator at column 6"},
      {"[job]\xE2\x80\xA8world_size = 0\n", 1, "a Unicode line separator at column 6"},
  };
  for (const Case& c : cases) {
    const IniDocument document = ParseIni(c.text);
    ASSERT_FALSE(document.problems.empty()) << c.what;
    EXPECT_EQ(document.problems[0].line, c.line) << c.what;
    EXPECT_EQ(document.problems[0].message,
              c.what + "; nbox reads text lines ended by \\n or \\r\\n");
  }
}

TEST(ParseIni, UnicodeTextInCommentsAndValuesIsFine) {
  // U+00C5 is C3 85 in UTF-8: its 85 byte is not a NEL.
  const IniDocument document =
      ParseIni("[job] ; \xC3\x85ngstr\xC3\xB6m \xE2\x80\x94 ok\nseed = 4\r\n");
  EXPECT_TRUE(document.problems.empty());
  ASSERT_EQ(document.entries.size(), 1u);
  EXPECT_EQ(document.entries[0].value, "4");
}

}  // namespace
}  // namespace nbox::scenario
