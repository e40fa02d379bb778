// "Did you mean ...?" for misspelt section, key and value names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nbox::scenario {

// Optimal string alignment distance between `a` and `b`, ignoring ASCII case: the number of
// single-character insertions, deletions, substitutions and swaps of neighbours that turn one
// into the other ("netwrok" -> "network" is 1).
int EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `name` if it is close enough to be a typo of it (distance at most
// a third of the name's length, and at least 1 allowed), else "". Ties go to the earlier
// candidate, so the answer does not depend on anything but the order given.
std::string NearestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace nbox::scenario
