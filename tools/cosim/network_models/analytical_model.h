// network.model = analytical: each collective's alpha-beta time on its routes' bottleneck, in
// closed form, on the flow model's ports and routes; congestion-unaware.
#pragma once

#include "tools/cosim/network_models.h"

namespace nbox::cosim {

const NetworkModel& AnalyticalModel();

}  // namespace nbox::cosim
