#include "tools/cosim/scenario/value_kinds.h"

#include <charconv>
#include <cmath>

#include "common/units.h"

namespace nbox::scenario {
namespace {

// The value of `parse(text)`, or nothing when it throws UnitError.
template <typename T>
std::optional<T> ReadUnit(T (*parse)(std::string_view), std::string_view text) {
  try {
    return parse(text);
  } catch (const UnitError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<uint64_t> ReadWholeNumber(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ReadReal(std::string_view text) {
  // from_chars takes no '+', and a leading '-' is never meaningful here.
  if (text.empty() || text.front() == '-') return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ReadSwitch(std::string_view text) {
  for (std::string_view on : {"on", "true", "yes", "1"}) {
    if (text == on) return true;
  }
  for (std::string_view off : {"off", "false", "no", "0"}) {
    if (text == off) return false;
  }
  return std::nullopt;
}

std::optional<uint64_t> ReadBytes(std::string_view text) {
  return ReadUnit(ParseBytes, text);
}
std::optional<uint64_t> ReadCount(std::string_view text) {
  return ReadUnit(ParseCount, text);
}
std::optional<double> ReadRate(std::string_view text) {
  return ReadUnit(ParseRateBps, text);
}
std::optional<double> ReadDuration(std::string_view text) {
  return ReadUnit(ParseSeconds, text);
}
std::optional<double> ReadFlopRate(std::string_view text) {
  return ReadUnit(ParseFlopsRate, text);
}
std::optional<double> ReadFlopCount(std::string_view text) {
  return ReadUnit(ParseFlops, text);
}

std::string ChoicesSentence(const std::vector<std::string>& choices) {
  if (choices.size() == 1) return choices.front();
  std::string sentence = "one of ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) sentence += ", ";
    sentence += choices[i];
  }
  return sentence;
}

}  // namespace nbox::scenario
