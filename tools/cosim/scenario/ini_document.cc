#include "tools/cosim/scenario/ini_document.h"

#include <fmt/format.h>
#include <ini.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/shortened.h"

namespace nbox::scenario {
namespace {

// What the line reader and the entry handler share while inih runs.
struct ParseState {
  std::string_view text;
  size_t position = 0;
  int line = 0;                         // number of the line last handed to inih
  std::vector<std::string_view> lines;  // every line as handed to inih, for messages
  IniDocument* document = nullptr;
};

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// The first character of `line` that nbox does not read as text of a line: a control
// character other than tab (NUL, a lone carriage return, form feed, vertical tab, ...) or a
// Unicode line separator (NEL as UTF-8 or Latin-1, U+2028, U+2029). Each would split or end
// the line differently for another reader, so they are refused, not guessed at. The line's
// own "\n" or "\r\n" has been cut off already.
std::optional<std::string> ForeignCharacter(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      return fmt::format("a control character (byte 0x{:02X}) at column {}", c, i + 1);
    }
    // NEL: C2 85 in UTF-8, or a lone 85 (Latin-1) that is not inside a UTF-8 character.
    const bool lone85 = c == 0x85 && (i == 0 || static_cast<unsigned char>(line[i - 1]) < 0x80);
    if (lone85 ||
        (c == 0xC2 && i + 1 < line.size() && static_cast<unsigned char>(line[i + 1]) == 0x85)) {
      return fmt::format("a NEL line separator at column {}", i + 1);
    }
    if (c == 0xE2 && line.substr(i, 2) == "\xE2\x80" && i + 2 < line.size() &&
        (static_cast<unsigned char>(line[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(line[i + 2]) == 0xA9)) {
      return fmt::format("a Unicode line separator at column {}", i + 1);
    }
  }
  return std::nullopt;
}

// What follows the "]" of a section header, unless it is blank or a comment.
std::string_view TextAfterHeader(std::string_view line) {
  const size_t close = line.find(']');
  if (close == std::string_view::npos) return {};
  const std::string_view rest = TrimLeft(line.substr(close + 1));
  if (rest.empty() || rest.front() == ';' || rest.front() == '#') return {};
  return rest;
}

// inih's fgets-style reader: hands over one whole line per call, so that inih's line count
// and ours agree and the handler knows the line of every entry.
char* ReadLine(char* buffer, int size, void* stream) {
  ParseState& state = *static_cast<ParseState*>(stream);
  if (state.position >= state.text.size()) return nullptr;
  const size_t newline = state.text.find('\n', state.position);
  const size_t next = newline == std::string_view::npos ? state.text.size() : newline + 1;
  std::string_view line = state.text.substr(state.position, next - state.position);
  state.position = next;
  ++state.line;
  if (state.line == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
  // Only "\n" and "\r\n" end a line.
  if (line.size() >= 1 && line.back() == '\n') line.remove_suffix(1);
  if (line.size() >= 1 && line.back() == '\r') line.remove_suffix(1);
  if (const auto foreign = ForeignCharacter(line)) {
    state.document->problems.push_back(
        {state.line, fmt::format("{}; nbox reads text lines ended by \\n or \\r\\n", *foreign)});
    line = {};
  }
  // inih would take an indented line for the continuation of the previous value.
  line = TrimRight(TrimLeft(line));
  if (!line.empty() && line.front() == '[') {
    const std::string_view rest = TextAfterHeader(line);
    if (!rest.empty()) {
      state.document->problems.push_back(
          {state.line, fmt::format("text after the section header: '{}'; put each key on a line "
                                   "of its own",
                                   Shortened(rest))});
    }
  }
  // inih's buffer must also hold a line end and the terminating NUL.
  const size_t longest = static_cast<size_t>(size) - 3;
  if (line.size() > longest) {
    state.document->problems.push_back(
        {state.line, fmt::format("line is longer than {} characters", longest)});
    line = {};
  }
  state.lines.push_back(line);
  // An empty view may have no data at all, which memcpy must not be given (UBSan, fuzzing).
  if (!line.empty()) std::memcpy(buffer, line.data(), line.size());
  buffer[line.size()] = '\0';
  if (!line.empty() && line.front() == '[') {
    const size_t close = line.find(']');
    if (close != std::string_view::npos) {
      const std::string_view name = TrimRight(TrimLeft(line.substr(1, close - 1)));
      state.document->headers.push_back({std::string(name), state.line});
    }
  }
  return buffer;
}

int OnEntry(void* user, const char* section, const char* name, const char* value) {
  ParseState& state = *static_cast<ParseState*>(user);
  // inih keeps spaces inside the brackets; "[ job ]" is section "job", as its header says.
  state.document->entries.push_back(
      {std::string(TrimRight(TrimLeft(section))), name, value != nullptr ? value : "", state.line});
  return 1;
}

}  // namespace

IniDocument ParseIni(std::string_view text) {
  IniDocument document;
  ParseState state;
  state.text = text;
  state.document = &document;
  const int result = ini_parse_stream(ReadLine, &state, OnEntry, &state);
  if (result == -2) throw std::bad_alloc();
  if (result > 0) {
    // OnEntry never fails, so this is the first line inih could not read.
    const std::string_view line = state.lines.at(static_cast<size_t>(result) - 1);
    document.problems.push_back(
        {result,
         fmt::format("expected [section], key = value or a comment, got '{}'", Shortened(line))});
  }
  std::stable_sort(document.problems.begin(), document.problems.end(),
                   [](const IniProblem& a, const IniProblem& b) { return a.line < b.line; });
  return document;
}

}  // namespace nbox::scenario
