// Value kinds of the [realranks] section that no other section needs: a list of ranks and
// the bridge's endpoint.
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

ValueKind RankList(Field<RealRanksSection, std::vector<int>> field, int max);
ValueKind BridgeEndpoint(Field<RealRanksSection, std::string> field);

}  // namespace nbox::scenario
