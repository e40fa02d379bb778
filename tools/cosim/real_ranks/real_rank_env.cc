#include "tools/cosim/real_ranks/real_rank_env.h"

#include <fmt/format.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace nbox::cosim {

Environment RankEnvironment(const BridgeAccess& access, int rank) {
  return {
      {"NBOX_NET_PLUGIN", access.plugin_path},
      {"NBOX_BRIDGE", access.bridge},
      {"NBOX_SECRET", access.secret},
      {"NBOX_JOB_ID", access.job_id},
      {"NBOX_RANK", std::to_string(rank)},
      {"NBOX_WORLD_SIZE", std::to_string(access.world_size)},
      {"NBOX_UNIQUE_ID", access.unique_id},
      {"NBOX_COLLECTIVES", access.collectives},
      {"NBOX_CLOCK", access.clock},
  };
}

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    throw std::runtime_error("cannot draw random bytes for the bridge secret (OpenSSL RAND_bytes)");
  }
  std::string hex;
  for (unsigned char byte : raw) hex += fmt::format("{:02x}", byte);
  return hex;
}

std::string ShellQuoted(const std::string& text) {
  if (!text.empty() &&
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                             "_-./:=,+@%") == std::string::npos) {
    return text;
  }
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string ManualStartText(const BridgeAccess& access, const std::vector<int>& ranks) {
  std::string text = fmt::format(
      "nbox-cosim: waiting for {} real rank(s). Start each one (same host for a unix bridge) "
      "with this environment and your program (e.g. nbox_allreduce_bench, nbox_mlp_train):\n",
      ranks.size());
  for (int rank : ranks) {
    text += fmt::format("  rank {}:\n", rank);
    for (const auto& [name, value] : RankEnvironment(access, rank)) {
      text += fmt::format("    export {}={}\n", name, ShellQuoted(value));
    }
  }
  return text;
}

}  // namespace nbox::cosim
