// Opening a session with nbox-cosim: connect to NBOX_BRIDGE and authenticate (wire/auth.h),
// blocking until done or until the configured timeout. Called from the plugin's init.
#pragma once

#include "bridge/nbox/client_config.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::nboxnet {

struct OpenedSession {
  UniqueFd fd;  // non-blocking, connected, authenticated
  wire::Welcome welcome;
};

// Throws std::runtime_error saying what failed (no server at the address, wrong secret, the
// server refused the rank, timeout).
OpenedSession OpenSession(const ClientConfig& config);

}  // namespace nbox::bridge::nboxnet
