// Opening a session with nbox-cosim: connect to NBOX_BRIDGE and authenticate (wire/auth.h),
// blocking until done or until the configured timeout. Called from the plugin's init.
#pragma once

#include <chrono>

#include "bridge/nbox/client_config.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::nboxnet {

struct OpenedSession {
  UniqueFd fd;  // non-blocking, connected, authenticated
  wire::Welcome welcome;
  // When, on this host's steady clock, the server most likely read its clock for Welcome's
  // start: halfway between sending Auth and reading Welcome (the server reads it in between).
  // A realtime rank's clock runs from here; anchoring it at Welcome's arrival instead would
  // put it behind the simulator's by Welcome's transit time for the whole run.
  std::chrono::steady_clock::time_point welcome_stamped;
};

// Throws std::runtime_error saying what failed (no server at the address, wrong secret, the
// server refused the rank, timeout).
OpenedSession OpenSession(const ClientConfig& config);

}  // namespace nbox::bridge::nboxnet
