#include "tools/cosim/real_ranks/rank_roles.h"

#include <fmt/format.h>

namespace nbox::cosim {

RankRoles RolesOf(const scenario::Scenario& scenario) {
  RankRoles roles;
  roles.real = scenario.realranks.ranks;  // ascending and distinct (cross-key rules)
  std::vector<bool> is_real(scenario.job.world_size, false);
  for (int rank : roles.real) is_real[rank] = true;
  for (int rank = 0; rank < scenario.job.world_size; ++rank) {
    if (!is_real[rank]) roles.emulated.push_back(rank);
  }
  if (roles.emulated.empty()) {
    roles.emulated_program = EmulatedProgram::kNone;
  } else if (!roles.real.empty() && scenario.realranks.peers == scenario::RealRankPeers::kMirror) {
    roles.emulated_program = EmulatedProgram::kMirror;
    roles.mirrored_rank = roles.real.front();
  }
  return roles;
}

std::string RankRanges(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    if (!text.empty()) text += ", ";
    text += last == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace nbox::cosim
