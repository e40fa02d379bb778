// The "real_ranks" block of results.json (only in runs with real ranks).
#pragma once

#include <nlohmann/json.hpp>

#include "tools/cosim/real_ranks/rank_roles.h"
#include "tools/cosim/real_ranks/real_rank_report.h"

namespace nbox::cosim {

// `roles` adds which ranks were emulated and what the iterations' compute figures come from:
// "emulated ranks" when they ran the workload, null when no rank's compute was measured.
nlohmann::ordered_json RealRanksJson(const RealRanksReport& report, const RankRoles& roles);

}  // namespace nbox::cosim
