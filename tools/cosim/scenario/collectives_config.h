// The job's collective settings (collectives/settings.h) from a scenario: built once, then
// handed whole to the ns-3 communicators (NboxJobHelper::SetCollectiveSettings) and, encoded,
// to every real rank, so an emulated rank and a real one build each schedule alike.
#pragma once

#include <cstdint>

#include "collectives/settings.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario {

// [collectives]'s channels, chunk and each operation's algorithm; on a rail fabric the
// servers' GPUs and NIC and NVLink rates; elsewhere no servers, and `host_nic_bps` (the built
// topology's link of rank 0's host) as the NIC the auto algorithms decide by.
coll::CollectiveSettings CollectiveSettingsOf(const Scenario& scenario, uint64_t host_nic_bps);

}  // namespace nbox::scenario
