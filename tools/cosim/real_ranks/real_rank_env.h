// What a real rank needs to join nbox-cosim: the environment variables of the plugin
// (bridge/README.md, "Running a real rank against nbox-cosim") and of the host runtime, for
// the ranks nbox-cosim launches and for the text it prints when the user starts them by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cosim/real_ranks/rank_launcher.h"

namespace nbox::cosim {

struct BridgeAccess {
  std::string plugin_path;  // libnccl-net-nbox.so, from the build (NBOX_NET_PLUGIN)
  std::string bridge;       // "unix:/tmp/.../bridge.sock" or "tcp:host:port"
  std::string secret;
  std::string job_id;
  std::string unique_id;  // the bootstrap root's id in the runtime's text form
  int world_size = 1;
  std::string collectives;  // coll::EncodeSettings of the emulated ranks' (NBOX_COLLECTIVES)
  std::string clock = "virtual";
};

// NBOX_NET_PLUGIN, NBOX_BRIDGE, NBOX_SECRET, NBOX_JOB_ID, NBOX_RANK, NBOX_WORLD_SIZE,
// NBOX_UNIQUE_ID, NBOX_COLLECTIVES, NBOX_CLOCK, in that order.
Environment RankEnvironment(const BridgeAccess& access, int rank);

// `bytes` random bytes from OpenSSL's generator (seeded from the OS), as lower-case hex.
// Throws std::runtime_error when the generator fails.
std::string RandomHex(size_t bytes);

// `text` quoted for a POSIX shell when it needs it.
std::string ShellQuoted(const std::string& text);

// "NBOX_RANK=1 NBOX_...=... <command>"-style lines telling the user how to start each rank.
std::string ManualStartText(const BridgeAccess& access, const std::vector<int>& ranks);

}  // namespace nbox::cosim
