// Value kinds of the [realranks] section: a list of ranks (which [events] names its slow GPUs
// with too) and the bridge's endpoint.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

// "0,3" or "3, 0" -> {0, 3}; "" -> {}. Nothing when an item is not a whole number, is above
// `max`, or appears twice.
std::optional<std::vector<int>> ReadRankList(std::string_view text, int max);
std::string RankListText(const std::vector<int>& ranks);  // "0,3"

// True for "unix" and "tcp:HOST:PORT" (HOST a name, an IPv4 literal or [IPv6], PORT 0..65535).
bool IsBridgeEndpoint(std::string_view text);

template <typename Section>
ValueKind RankList(Field<Section, std::vector<int>> field, int max) {
  ValueKind kind;
  kind.expected = "a comma-separated list of distinct ranks from 0 to " + std::to_string(max) +
                  ", such as 0 or 0,3; empty = none";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    std::optional<std::vector<int>> ranks = ReadRankList(text, max);
    if (ranks) field.In(scenario) = std::move(*ranks);
    return ranks.has_value();
  };
  kind.format = [=](const Scenario& scenario) { return RankListText(field.In(scenario)); };
  return kind;
}

ValueKind BridgeEndpoint(Field<RealRanksSection, std::string> field);

}  // namespace nbox::scenario
