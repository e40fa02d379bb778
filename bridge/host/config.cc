#include "bridge/host/config.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "bridge/host/host_error.h"
#include "bridge/net/inet_address.h"
#include "common/units.h"

namespace nbox::host {

long IntFromEnvironment(const char* name, long fallback, long min, long max) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || parsed < min || parsed > max) {
    throw HostError(nboxInvalidArgument, std::string(name) + ": expected a whole number in " +
                                             std::to_string(min) + ".." + std::to_string(max) +
                                             ", got '" + value + "'");
  }
  return parsed;
}

coll::CollectiveSettings StandaloneCollectiveSettings() {
  return coll::CollectiveSettings{};
}

namespace {

// NBOX_CHANNELS and NBOX_CHUNK_BYTES over `settings`.
void ReadChannelsAndChunk(coll::CollectiveSettings& settings) {
  settings.channels =
      static_cast<int>(IntFromEnvironment("NBOX_CHANNELS", settings.channels, 1, 64));
  const std::string chunk = bridge::EnvOr("NBOX_CHUNK_BYTES", "");
  if (chunk.empty()) return;
  try {
    settings.chunk_bytes = ParseBytes(chunk);
  } catch (const UnitError& error) {
    throw HostError(nboxInvalidArgument, std::string("NBOX_CHUNK_BYTES: ") + error.what());
  }
  if (settings.chunk_bytes < 8 || settings.chunk_bytes > (uint64_t{1} << 30)) {
    throw HostError(nboxInvalidArgument,
                    "NBOX_CHUNK_BYTES: expected 8B..1GiB, got '" + chunk + "'");
  }
}

}  // namespace

RuntimeConfig ConfigFromEnvironment() {
  RuntimeConfig config;
  config.plugin = bridge::EnvOr("NBOX_NET_PLUGIN", "nboxtcp");
  config.device = static_cast<int>(IntFromEnvironment("NBOX_NET_DEV", 0, 0, 1 << 20));
  const std::string whole = bridge::EnvOr("NBOX_COLLECTIVES", "");
  if (whole.empty()) {
    ReadChannelsAndChunk(config.collectives);
  } else {
    try {
      config.collectives = coll::DecodeSettings(whole);
    } catch (const std::invalid_argument& error) {
      throw HostError(nboxInvalidArgument, std::string("NBOX_COLLECTIVES: ") + error.what());
    }
    // One description: the separate variables may only repeat it.
    coll::CollectiveSettings separate = config.collectives;
    ReadChannelsAndChunk(separate);
    if (separate != config.collectives) {
      throw HostError(nboxInvalidArgument,
                      "NBOX_CHANNELS/NBOX_CHUNK_BYTES disagree with NBOX_COLLECTIVES (" +
                          coll::DescribeDifference(separate, config.collectives) +
                          "); set NBOX_COLLECTIVES alone");
    }
  }
  config.bootstrap_timeout = std::chrono::seconds(IntFromEnvironment(
      "NBOX_BOOTSTRAP_TIMEOUT_S", kDefaultBootstrapTimeoutSeconds, 1, 24 * 3600));
  return config;
}

std::string BootstrapAddressSetting(std::string* variable) {
  const std::string explicit_address = bridge::EnvOr("NBOX_BOOTSTRAP_ADDR", "");
  if (!explicit_address.empty()) {
    *variable = "NBOX_BOOTSTRAP_ADDR";
    return explicit_address;
  }
  const std::string ifaddr = bridge::EnvOr("NBOX_TCP_IFADDR", "");
  if (!ifaddr.empty()) {
    *variable = "NBOX_TCP_IFADDR";
    return ifaddr.substr(0, ifaddr.find(','));
  }
  *variable = "default";
  return "127.0.0.1";
}

}  // namespace nbox::host
