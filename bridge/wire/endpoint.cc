#include "bridge/wire/endpoint.h"

#include <sys/un.h>

namespace nbox::bridge::wire {
namespace {

[[noreturn]] void Fail(std::string_view setting, std::string_view text, const std::string& why) {
  throw EndpointError(std::string(setting) + ": " + why + " in '" + std::string(text) +
                      "' (expected unix:/path/to/socket or tcp:host:port)");
}

}  // namespace

std::string Endpoint::ToString() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp:" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Endpoint ParseEndpoint(std::string_view text, std::string_view setting) {
  Endpoint endpoint;
  if (text.rfind("unix:", 0) == 0) {
    endpoint.kind = Endpoint::Kind::kUnix;
    endpoint.path = std::string(text.substr(5));
    if (endpoint.path.empty() || endpoint.path[0] != '/')
      Fail(setting, text, "a Unix socket needs an absolute path");
    if (endpoint.path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      Fail(setting, text,
           "the socket path is longer than " + std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
               " bytes");
    }
    return endpoint;
  }
  if (text.rfind("tcp:", 0) != 0) Fail(setting, text, "unknown transport");
  std::string_view rest = text.substr(4);
  size_t colon;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      Fail(setting, text, "an IPv6 host needs the form [addr]:port");
    }
    endpoint.host = std::string(rest.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = rest.rfind(':');
    if (colon == std::string_view::npos) Fail(setting, text, "no port");
    endpoint.host = std::string(rest.substr(0, colon));
    if (endpoint.host.find(':') != std::string::npos)
      Fail(setting, text, "an IPv6 host must be in brackets");
  }
  if (endpoint.host.empty()) Fail(setting, text, "no host");
  const std::string_view port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5) Fail(setting, text, "the port is not a number in 0..65535");
  uint32_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') Fail(setting, text, "the port is not a number in 0..65535");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535) Fail(setting, text, "the port is not a number in 0..65535");
  endpoint.kind = Endpoint::Kind::kTcp;
  endpoint.port = static_cast<uint16_t>(value);
  return endpoint;
}

}  // namespace nbox::bridge::wire
