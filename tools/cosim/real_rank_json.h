// The "real_ranks" block of results.json (only in runs with real ranks).
#pragma once

#include <nlohmann/json.hpp>

#include "tools/cosim/real_rank_report.h"

namespace nbox::cosim {

nlohmann::ordered_json RealRanksJson(const RealRanksReport& report);

}  // namespace nbox::cosim
