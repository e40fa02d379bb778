// The event scheduler a run uses: NboxPruningScheduler (ns3-module/README.md, "Event
// scheduler"), or the one a user names as ns-3 lets them, NS_GLOBAL_VALUE=SchedulerType=<type>.
// ns-3 reads that variable itself before the nbox library has registered its types and
// silently ignores a name it does not know; nbox-cosim reads it again, so every scheduler
// linked in can be named and a wrong name is an error.
#pragma once

#include <string>

namespace nbox::cosim {

// The SchedulerType in an NS_GLOBAL_VALUE string ("name=value;name=value"), or "" if none.
std::string SchedulerTypeIn(const std::string& global_values);

// Installs the scheduler for the next simulation; throws std::invalid_argument naming
// NS_GLOBAL_VALUE when its SchedulerType is not an ns-3 scheduler.
void InstallEventScheduler();

}  // namespace nbox::cosim
