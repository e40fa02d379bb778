// The runtime's settings from the environment (see nbox_host.h for the list). Bad values are
// errors naming the variable and what was expected, never silently replaced by defaults.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "collectives/settings.h"

namespace nbox::host {

inline constexpr int kDefaultBootstrapTimeoutSeconds = 120;

// How collectives run when NBOX_COLLECTIVES does not say: coll::CollectiveSettings' defaults
// (the scenario keys' too: NCCL's ring, 2 channels, 1 MiB chunks, no servers), with
// NBOX_CHANNELS and NBOX_CHUNK_BYTES over them.
coll::CollectiveSettings StandaloneCollectiveSettings();

struct RuntimeConfig {
  std::string plugin = "nboxtcp";  // NBOX_NET_PLUGIN
  int device = 0;                  // NBOX_NET_DEV
  // NBOX_COLLECTIVES (coll::EncodeSettings; nbox-cosim sends its scenario's whole), else
  // StandaloneCollectiveSettings().
  coll::CollectiveSettings collectives = StandaloneCollectiveSettings();
  std::chrono::seconds bootstrap_timeout{kDefaultBootstrapTimeoutSeconds};
};

// Throws HostError(nboxInvalidArgument) naming the variable.
RuntimeConfig ConfigFromEnvironment();

// The address nboxGetUniqueId listens on: NBOX_BOOTSTRAP_ADDR, else the first entry of
// NBOX_TCP_IFADDR, else 127.0.0.1. Throws HostError naming the variable.
std::string BootstrapAddressSetting(std::string* variable);

// A whole number in [min, max] from environment variable `name` (`fallback` when unset).
// Throws HostError(nboxInvalidArgument) naming it.
long IntFromEnvironment(const char* name, long fallback, long min, long max);

}  // namespace nbox::host
