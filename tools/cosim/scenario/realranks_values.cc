#include "tools/cosim/scenario/realranks_values.h"

#include <algorithm>

namespace nbox::scenario {
namespace {

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::vector<int>> ReadRankList(std::string_view text, int max) {
  std::vector<int> ranks;
  text = Trimmed(text);
  if (text.empty()) return ranks;
  while (true) {
    const size_t comma = text.find(',');
    const std::optional<uint64_t> rank = ReadWholeNumber(Trimmed(text.substr(0, comma)));
    if (!rank || *rank > static_cast<uint64_t>(max)) return std::nullopt;
    if (std::find(ranks.begin(), ranks.end(), static_cast<int>(*rank)) != ranks.end()) {
      return std::nullopt;
    }
    ranks.push_back(static_cast<int>(*rank));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::string RankListText(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) {
    if (!text.empty()) text += ',';
    text += std::to_string(rank);
  }
  return text;
}

bool IsBridgeEndpoint(std::string_view text) {
  if (text == "unix") return true;
  constexpr std::string_view kTcp = "tcp:";
  if (text.substr(0, kTcp.size()) != kTcp) return false;
  text.remove_prefix(kTcp.size());
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view host = text.substr(0, colon);
  const std::optional<uint64_t> port = ReadWholeNumber(text.substr(colon + 1));
  if (!port || *port > 65535) return false;
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  // A name or an IPv4 literal: no brackets, no colons, no spaces.
  return host.find_first_of(":[] \t") == std::string_view::npos;
}

ValueKind BridgeEndpoint(Field<RealRanksSection, std::string> field) {
  ValueKind kind;
  kind.expected = "unix (a private Unix socket) or tcp:HOST:PORT (port 0 = any free port)";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    if (!IsBridgeEndpoint(text)) return false;
    field.In(scenario) = std::string(text);
    return true;
  };
  kind.format = [=](const Scenario& scenario) { return field.In(scenario); };
  return kind;
}

}  // namespace nbox::scenario
