// The bootstrap root of one communicator: a thread in the process that called
// nboxGetUniqueId. It collects every rank's join (checking they agree on the nonce, the number
// of ranks and the settings that must match), sends everyone the table of all ranks' listen
// handles, and then watches the ranks' connections: when one closes without saying goodbye
// (its process died or aborted) it tells every other rank, so none of them waits forever.
#pragma once

#include <chrono>
#include <string>

#include "bridge/host/unique_id.h"

namespace nbox::host {

// Binds the root to `address` (an IP or interface, from `variable`), starts its thread and
// returns what the unique id must carry. The thread ends once every rank left or a failure was
// announced, or when not all ranks joined within `join_timeout`. Throws HostError.
UniqueIdContents StartBootstrapRoot(const std::string& address, const std::string& variable,
                                    std::chrono::seconds join_timeout);

}  // namespace nbox::host
