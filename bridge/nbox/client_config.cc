#include "bridge/nbox/client_config.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "bridge/wire/auth.h"

namespace nbox::bridge::nboxnet {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

uint64_t Number(const char* name, uint64_t min, uint64_t max, bool required, uint64_t fallback) {
  const std::string text = Env(name);
  if (text.empty()) {
    if (required) throw std::runtime_error(std::string(name) + " is not set");
    return fallback;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || text[0] == '-' || value < min || value > max) {
    throw std::runtime_error(std::string(name) + ": expected a whole number in " +
                             std::to_string(min) + ".." + std::to_string(max) + ", got '" + text +
                             "'");
  }
  return value;
}

}  // namespace

ClientConfig ConfigFromEnvironment() {
  ClientConfig config;
  const std::string bridge = Env("NBOX_BRIDGE");
  if (bridge.empty()) {
    throw std::runtime_error(
        "NBOX_BRIDGE is not set (expected unix:/path/to/socket or tcp:host:port, as nbox-cosim "
        "prints it)");
  }
  try {
    config.endpoint = wire::ParseEndpoint(bridge, "NBOX_BRIDGE");
  } catch (const wire::EndpointError& error) {
    throw std::runtime_error(error.what());
  }
  config.secret = Env("NBOX_SECRET");
  const std::string problem = wire::CheckSecret(config.secret, "NBOX_SECRET");
  if (!problem.empty()) throw std::runtime_error(problem);
  config.world = static_cast<uint32_t>(Number("NBOX_WORLD_SIZE", 1, wire::kMaxWorld, true, 0));
  config.rank = static_cast<uint32_t>(Number("NBOX_RANK", 0, config.world - 1, true, 0));
  const std::string job = Env("NBOX_JOB_ID");
  if (!job.empty()) {
    bool valid = job.size() <= wire::kMaxJobIdBytes;
    for (char c : job) {
      valid = valid && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' || c == '-');
    }
    if (!valid) {
      throw std::runtime_error("NBOX_JOB_ID: expected 1..64 characters of [A-Za-z0-9._:-], got '" +
                               job + "'");
    }
    config.job_id = job;
  }
  const std::string clock = Env("NBOX_CLOCK");
  if (clock == "realtime") {
    config.clock = wire::ClockMode::kRealtime;
  } else if (clock.empty() || clock == "virtual") {
    config.clock = wire::ClockMode::kVirtual;
  } else {
    throw std::runtime_error("NBOX_CLOCK: expected virtual or realtime, got '" + clock + "'");
  }
  config.timeout =
      std::chrono::milliseconds(Number("NBOX_BRIDGE_TIMEOUT_MS", 100, 3600000, false, 10000));
  return config;
}

}  // namespace nbox::bridge::nboxnet
