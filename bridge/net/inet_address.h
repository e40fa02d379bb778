// IPv4/IPv6 socket addresses small enough to travel inside a 128-byte NCCL handle or unique id,
// and the parsing of "which local address" settings such as NBOX_TCP_IFADDR.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nbox::bridge {

// A setting that names no usable address; what() names the setting and the bad entry.
class AddressError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Trivially copyable (it is memcpy'd into handles); port in network order inside.
struct InetAddress {
  union {
    sockaddr sa;
    sockaddr_in v4;
    sockaddr_in6 v6;
  };

  InetAddress();
  socklen_t length() const;
  int family() const { return sa.sa_family; }
  uint16_t port() const;  // host order
  void set_port(uint16_t port);
  // "127.0.0.1:5000", "[fd00::2]:5000".
  std::string ToString() const;
};

// An address to bind, with the name people know it by (the interface, or the literal).
struct LocalAddress {
  std::string name;     // "eth0" or "10.0.0.1"
  std::string if_name;  // the interface that holds the address, "" if unknown
  InetAddress address;  // port 0
};

// Parses one entry: an IPv4 or IPv6 literal ("10.0.0.1", "fd00::2") or the name of an
// interface ("eth0", whose first IPv4 address is used, else its first IPv6 one). Throws
// AddressError naming `setting` and the entry.
LocalAddress ParseLocalAddress(std::string_view entry, std::string_view setting);

// A comma-separated list of entries (spaces around entries are ignored, empty entries are
// errors). Throws AddressError naming `setting`.
std::vector<LocalAddress> ParseLocalAddressList(std::string_view list, std::string_view setting);

// The value of environment variable `name`, or `fallback` when it is unset or empty.
std::string EnvOr(const char* name, std::string_view fallback);

}  // namespace nbox::bridge
