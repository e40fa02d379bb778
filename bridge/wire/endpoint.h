// Where nbox-cosim's bridge listens, as written in NBOX_BRIDGE and printed by the server:
// "unix:/path/to/socket" or "tcp:host:port" (host an IPv4/IPv6 literal or a name; IPv6 in
// brackets: "tcp:[::1]:7000").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nbox::bridge::wire {

class EndpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kUnix;
  std::string path;   // kUnix
  std::string host;   // kTcp
  uint16_t port = 0;  // kTcp

  std::string ToString() const;
};

// Throws EndpointError naming `setting` and saying what was expected.
Endpoint ParseEndpoint(std::string_view text, std::string_view setting);

}  // namespace nbox::bridge::wire
