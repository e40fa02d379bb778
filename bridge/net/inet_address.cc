#include "bridge/net/inet_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <cstdlib>
#include <cstring>

namespace nbox::bridge {

InetAddress::InetAddress() {
  std::memset(&v6, 0, sizeof(v6));
}

socklen_t InetAddress::length() const {
  return family() == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

uint16_t InetAddress::port() const {
  return ntohs(family() == AF_INET6 ? v6.sin6_port : v4.sin_port);
}

void InetAddress::set_port(uint16_t port) {
  if (family() == AF_INET6) {
    v6.sin6_port = htons(port);
  } else {
    v4.sin_port = htons(port);
  }
}

std::string InetAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {0};
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    return "[" + std::string(text) + "]:" + std::to_string(port());
  }
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(port());
  }
  return "<no address>";
}

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The interface holding `address` (a literal), or "" when none does (e.g. a wildcard).
std::string InterfaceOf(const InetAddress& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* it = list; it != nullptr && found.empty(); it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != address.family()) continue;
    if (address.family() == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
      if (a->sin_addr.s_addr == address.v4.sin_addr.s_addr) found = it->ifa_name;
    } else {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(it->ifa_addr);
      if (std::memcmp(&a->sin6_addr, &address.v6.sin6_addr, sizeof(in6_addr)) == 0) {
        found = it->ifa_name;
      }
    }
  }
  freeifaddrs(list);
  return found;
}

// The first IPv4 address of interface `name`, else its first IPv6 one (link-local last).
bool AddressOfInterface(const std::string& name, InetAddress* out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool have_v4 = false;
  int v6_rank = 0;  // 0 none, 1 link-local, 2 other
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || name != it->ifa_name) continue;
    if (it->ifa_addr->sa_family == AF_INET && !have_v4) {
      std::memcpy(&out->v4, it->ifa_addr, sizeof(sockaddr_in));
      have_v4 = true;
    } else if (it->ifa_addr->sa_family == AF_INET6 && !have_v4) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(it->ifa_addr);
      const int rank = IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) ? 1 : 2;
      if (rank > v6_rank) {
        std::memcpy(&out->v6, a, sizeof(sockaddr_in6));
        v6_rank = rank;
      }
    }
  }
  freeifaddrs(list);
  if (!have_v4 && v6_rank == 0) return false;
  out->set_port(0);
  return true;
}

}  // namespace

LocalAddress ParseLocalAddress(std::string_view entry_text, std::string_view setting) {
  const std::string entry(Trim(entry_text));
  LocalAddress result;
  result.name = entry;
  if (entry.empty()) {
    throw AddressError(std::string(setting) + ": empty entry; expected an IP address such as " +
                       "127.0.0.1 or an interface name such as eth0");
  }
  if (inet_pton(AF_INET, entry.c_str(), &result.address.v4.sin_addr) == 1) {
    result.address.v4.sin_family = AF_INET;
  } else if (inet_pton(AF_INET6, entry.c_str(), &result.address.v6.sin6_addr) == 1) {
    result.address.v6.sin6_family = AF_INET6;
  } else if (entry.size() < IF_NAMESIZE && AddressOfInterface(entry, &result.address)) {
    result.if_name = entry;
    return result;
  } else {
    throw AddressError(std::string(setting) + ": '" + entry +
                       "' is neither an IP address nor an interface with an address");
  }
  result.if_name = InterfaceOf(result.address);
  return result;
}

std::vector<LocalAddress> ParseLocalAddressList(std::string_view list, std::string_view setting) {
  std::vector<LocalAddress> result;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string_view entry = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    result.push_back(ParseLocalAddress(entry, setting));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return result;
}

std::string EnvOr(const char* name, std::string_view fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::string(fallback);
  return value;
}

}  // namespace nbox::bridge
