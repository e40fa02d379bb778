// Internal to nbox_topologies: node names in topology files.
//
// A NAME is a letter or '_' followed by letters, digits, '_' or '-'. A range "h0..h7" stands
// for h0, h1, ..., h7: both ends share the prefix, their numbers ascend and have no leading
// zeros.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nbox::topo::internal {

// A range may name at most this many nodes (a guard against typos like h0..h10000000).
constexpr int kMaxRangeSize = 1000000;

// Thrown by ExpandNames with "what is wrong; expected ..." (no file or line: the caller adds
// them).
class NameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One NAME or range -> the names it stands for, in ascending order.
std::vector<std::string> ExpandNames(std::string_view token);

// A line's words, separated by spaces or tabs, everything from '#' on a comment (the topology
// and placement files' lines).
std::vector<std::string_view> SplitWords(std::string_view line);

// The candidate with the smallest edit distance to `name` (the first such on ties), or ""
// when there is no candidate.
std::string NearestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace nbox::topo::internal
