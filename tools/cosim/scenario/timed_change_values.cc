#include "tools/cosim/scenario/timed_change_values.h"

#include <fmt/format.h>

#include <algorithm>

#include "tools/cosim/scenario/realranks_values.h"
#include "topologies/topology.h"

namespace nbox::scenario {
namespace {

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace

std::optional<TimedChange> ReadTimedChange(std::string_view text) {
  const std::vector<std::string_view> words = Words(text);
  if (words.size() < 2) return std::nullopt;
  TimedChange change;
  const std::optional<double> at = ReadDuration(words[0]);
  if (!at || *at < 0 || *at > kLatestChangeS) return std::nullopt;
  change.at_s = *at;
  if (words[1] == "gpu" && words.size() == 5 && words[3] == "slowdown") {
    change.kind = TimedChange::Kind::kGpuSlowdown;
    std::optional<std::vector<int>> ranks = ReadRankList(words[2], kMaxEventRank);
    const std::optional<double> slowdown = ReadReal(words[4]);
    if (!ranks || ranks->empty() || !slowdown || *slowdown < 1 || *slowdown > kMaxSlowdown) {
      return std::nullopt;
    }
    change.ranks = std::move(*ranks);
    change.slowdown = *slowdown;
    return change;
  }
  const auto up_or_down = [&](std::string_view word) -> std::optional<TimedChange::Kind> {
    if (word == "down") return TimedChange::Kind::kLinksDown;
    if (word == "up") return TimedChange::Kind::kLinksUp;
    return std::nullopt;
  };
  if (words[1] == "link" && words.size() == 5 && up_or_down(words[4]) && words[2] != words[3]) {
    change.kind = *up_or_down(words[4]);
    change.node_a = std::string(words[2]);
    change.node_b = std::string(words[3]);
    return change;
  }
  if (words[1] == "switch" && words.size() == 4 && up_or_down(words[3])) {
    change.kind = *up_or_down(words[3]);
    change.node_a = std::string(words[2]);
    return change;
  }
  if (words[1] == "link" && words.size() == 6 && words[4] == "rate") {
    change.kind = TimedChange::Kind::kLinkRate;
    const std::optional<double> rate = ReadRate(words[5]);
    if (words[2] == words[3] || !rate || *rate < topo::kMinLinkRateBps ||
        *rate > topo::kMaxLinkRateBps) {
      return std::nullopt;
    }
    change.node_a = std::string(words[2]);
    change.node_b = std::string(words[3]);
    change.rate_bps = *rate;
    return change;
  }
  return std::nullopt;
}

std::string TimedChangeText(const TimedChange& change) {
  if (change.kind == TimedChange::Kind::kGpuSlowdown) {
    return fmt::format("{} gpu {} slowdown {}", DurationText(change.at_s),
                       RankListText(change.ranks), RealText(change.slowdown));
  }
  if (change.kind == TimedChange::Kind::kLinkRate) {
    return fmt::format("{} link {} {} rate {}", DurationText(change.at_s), change.node_a,
                       change.node_b, RateText(change.rate_bps));
  }
  const char* state = change.kind == TimedChange::Kind::kLinksDown ? "down" : "up";
  if (change.node_b.empty()) {
    return fmt::format("{} switch {} {}", DurationText(change.at_s), change.node_a, state);
  }
  return fmt::format("{} link {} {} {}", DurationText(change.at_s), change.node_a, change.node_b,
                     state);
}

bool HasLinkFailures(const EventsSection& events) {
  return std::any_of(events.changes.begin(), events.changes.end(), [](const TimedChange& c) {
    return c.kind == TimedChange::Kind::kLinksDown || c.kind == TimedChange::Kind::kLinksUp;
  });
}

ValueKind TimedChanges(Field<EventsSection, std::vector<TimedChange>> field) {
  ValueKind kind;
  kind.expected = fmt::format(
      "TIME gpu RANKS slowdown X (X from 1 to {}: from TIME on those GPUs compute X times as "
      "long; 1 = their own speed again), TIME link NODE NODE rate RATE (every link joining "
      "the two nodes runs at RATE each way from TIME on), TIME link NODE NODE down|up or TIME "
      "switch NODE down|up (those links, or every link of the switch, fail or come back; "
      "routes follow), TIME from 0s to {}, such as '2ms gpu 3 slowdown 1.3', '1s link leaf0 "
      "spine1 rate 100Gbps' or '1s switch spine1 down'; give the key once per change",
      RealText(kMaxSlowdown), DurationText(kLatestChangeS));
  kind.repeatable = true;
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    // "a; b" is what format writes for several, "" for none; all of them or none are taken.
    std::vector<TimedChange> read;
    while (!Words(text).empty()) {
      const size_t semicolon = text.find(';');
      std::optional<TimedChange> change = ReadTimedChange(text.substr(0, semicolon));
      if (!change) return false;
      read.push_back(std::move(*change));
      text = semicolon == std::string_view::npos ? std::string_view() : text.substr(semicolon + 1);
    }
    std::vector<TimedChange>& changes = field.In(scenario);
    changes.insert(changes.end(), read.begin(), read.end());
    return true;
  };
  kind.format = [=](const Scenario& scenario) {
    std::string text;
    for (const TimedChange& change : field.In(scenario)) {
      if (!text.empty()) text += "; ";
      text += TimedChangeText(change);
    }
    return text;
  };
  return kind;
}

}  // namespace nbox::scenario
