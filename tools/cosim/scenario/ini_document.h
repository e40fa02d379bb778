// An INI text split into sections and key = value entries, each with its line number.
//
// The syntax is inih's (https://github.com/benhoyt/inih): "[section]" headers,
// "key = value" (or "key: value") entries, whole-line comments starting with ';' or '#',
// and inline comments starting with " ;". Unlike plain inih, indented lines are ordinary
// lines, never continuations of the previous value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nbox::scenario {

struct IniSectionHeader {
  std::string name;  // the text between '[' and ']', without surrounding spaces
  int line = 0;
};

struct IniEntry {
  std::string section;  // as in its header; "" before the first header
  std::string key;
  std::string value;  // without surrounding spaces and inline comment
  int line = 0;
};

// A line that is not a header, an entry, a comment or blank; or one too long to read.
struct IniProblem {
  int line = 0;
  std::string message;  // without file or line
};

struct IniDocument {
  std::vector<IniSectionHeader> headers;  // in file order, repeats included
  std::vector<IniEntry> entries;          // in file order
  std::vector<IniProblem> problems;       // by line
};

// Parses INI text. Never throws on bad input: bad lines become problems. inih reports only
// the first malformed line, so at most one syntax problem is listed.
IniDocument ParseIni(std::string_view text);

}  // namespace nbox::scenario
