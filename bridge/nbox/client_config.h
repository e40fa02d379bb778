// The nbox plugin's settings, from the environment nbox-cosim prints for each real rank:
//   NBOX_BRIDGE      unix:/path/to/bridge.sock | tcp:host:port   (required)
//   NBOX_SECRET      the shared secret, >= 16 characters          (required)
//   NBOX_RANK        this process's rank                          (required)
//   NBOX_WORLD_SIZE  ranks in the job                             (required)
//   NBOX_JOB_ID      the job's id, default "nbox"
//   NBOX_CLOCK       virtual (default) | realtime
//   NBOX_BRIDGE_TIMEOUT_MS  connecting and authenticating, and the longest silence of the
//                    server before the plugin gives up on it; default 10000
#pragma once

#include <chrono>
#include <string>

#include "bridge/wire/endpoint.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::nboxnet {

struct ClientConfig {
  wire::Endpoint endpoint;
  std::string secret;
  uint32_t rank = 0;
  uint32_t world = 0;
  std::string job_id = "nbox";
  wire::ClockMode clock = wire::ClockMode::kVirtual;
  std::chrono::milliseconds timeout{10000};
};

// Throws std::runtime_error naming the variable and what was expected.
ClientConfig ConfigFromEnvironment();

}  // namespace nbox::bridge::nboxnet
