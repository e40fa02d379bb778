// Node names, ranges of names and the nearest-name hint of topology files.
#include "topologies/file_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

#include "common/shortened.h"

namespace nbox::topo::internal {
namespace {

constexpr char kNameRule[] =
    "expected a NAME (a letter or '_' followed by letters, digits, '_' or '-') or a range "
    "such as h0..h7";

bool IsName(std::string_view text) {
  if (text.empty()) return false;
  const auto first = static_cast<unsigned char>(text[0]);
  if (!std::isalpha(first) && first != '_') return false;
  return std::all_of(text.begin() + 1, text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_' || c == '-';
  });
}

struct NumberedName {
  std::string_view prefix;
  long number = 0;
};

// "edge0_12" -> {"edge0_", 12}. `range` is the whole token, for the message.
NumberedName SplitNumber(std::string_view name, std::string_view range) {
  size_t digits_start = name.size();
  while (digits_start > 0 && std::isdigit(static_cast<unsigned char>(name[digits_start - 1]))) {
    --digits_start;
  }
  const std::string_view digits = name.substr(digits_start);
  if (digits.empty()) {
    throw NameError(fmt::format(
        "bad range '{}': '{}' does not end in a number; expected a range such as h0..h7",
        Shortened(range), Shortened(name)));
  }
  if (digits.size() > 1 && digits[0] == '0') {
    throw NameError(
        fmt::format("bad range '{}': '{}' has a leading zero; expected numbers such as h0..h7",
                    Shortened(range), Shortened(name)));
  }
  if (digits.size() > 9) {
    throw NameError(
        fmt::format("bad range '{}': the number of '{}' is too long; expected at most 9 digits",
                    Shortened(range), Shortened(name)));
  }
  return {name.substr(0, digits_start), std::stol(std::string(digits))};
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> ExpandNames(std::string_view token) {
  const size_t dots = token.find("..");
  if (dots == std::string_view::npos) {
    if (!IsName(token))
      throw NameError(fmt::format("bad name '{}'; {}", Shortened(token), kNameRule));
    return {std::string(token)};
  }
  const std::string_view first = token.substr(0, dots);
  const std::string_view last = token.substr(dots + 2);
  if (!IsName(first) || !IsName(last)) {
    throw NameError(fmt::format("bad range '{}'; {}", Shortened(token), kNameRule));
  }
  const NumberedName from = SplitNumber(first, token);
  const NumberedName to = SplitNumber(last, token);
  if (from.prefix != to.prefix) {
    throw NameError(fmt::format(
        "bad range '{}': '{}' and '{}' differ before the number; expected the same prefix "
        "such as h0..h7",
        Shortened(token), Shortened(first), Shortened(last)));
  }
  if (from.number > to.number) {
    throw NameError(
        fmt::format("bad range '{}': {} is above {}; expected ascending numbers such as h0..h7",
                    Shortened(token), from.number, to.number));
  }
  if (to.number - from.number >= kMaxRangeSize) {
    throw NameError(fmt::format("bad range '{}': {} names; expected at most {}", Shortened(token),
                                to.number - from.number + 1, kMaxRangeSize));
  }
  std::vector<std::string> names;
  names.reserve(to.number - from.number + 1);
  for (long n = from.number; n <= to.number; ++n) {
    names.push_back(fmt::format("{}{}", from.prefix, n));
  }
  return names;
}

std::string NearestName(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(name, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::vector<std::string_view> SplitWords(std::string_view line) {
  line = line.substr(0, line.find('#'));
  constexpr std::string_view kSpace = " \t\r\v\f";
  std::vector<std::string_view> words;
  size_t start = line.find_first_not_of(kSpace);
  while (start != std::string_view::npos) {
    const size_t end = std::min(line.find_first_of(kSpace, start), line.size());
    words.push_back(line.substr(start, end - start));
    start = line.find_first_not_of(kSpace, end);
  }
  return words;
}

}  // namespace nbox::topo::internal
