// The value kind of [events] at: one change to the cluster at a moment of the run, such as
// "2s link leaf0 spine1 rate 100Gbps" or "500ms gpu 3,7 slowdown 1.3".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

// The latest moment a change may name, in simulated seconds (a day).
inline constexpr double kLatestChangeS = 86400;
// The largest rank a GPU change names, and the range of its slowdown (1 puts a GPU back to its
// speed); [events] slow_gpus and slowdown take the same.
inline constexpr int kMaxEventRank = 65535;
inline constexpr double kMaxSlowdown = 100;

// One change, "TIME gpu RANKS slowdown X" or "TIME link NODE NODE rate RATE" (words separated
// by spaces); nothing when the text is not one of them or a value is out of range.
std::optional<TimedChange> ReadTimedChange(std::string_view text);
// The text ReadTimedChange reads back to `change`.
std::string TimedChangeText(const TimedChange& change);

// Whether any change takes links or a switch down (or back up): the network must be able to
// re-route its connections.
bool HasLinkFailures(const EventsSection& events);

// A repeatable key whose every value adds its changes (one, or several separated by ';') to
// `field`, in order.
ValueKind TimedChanges(Field<EventsSection, std::vector<TimedChange>> field);

}  // namespace nbox::scenario
