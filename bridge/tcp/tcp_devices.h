// The plugin's devices: one per local address named in NBOX_TCP_IFADDR.
#pragma once

#include <string>
#include <vector>

#include "bridge/net/inet_address.h"

namespace nbox::bridge::tcp {

inline constexpr const char* kIfAddrVariable = "NBOX_TCP_IFADDR";
inline constexpr const char* kDefaultIfAddr = "127.0.0.1";
// What a device reports when the kernel does not know the link speed (loopback, veth).
inline constexpr int kDefaultSpeedMbps = 10000;

struct Device {
  LocalAddress local;
  int speed_mbps = kDefaultSpeedMbps;
  std::string pci_path;  // "" for virtual interfaces
};

// Builds the devices from `ifaddr_list` (the value of NBOX_TCP_IFADDR: comma-separated IP
// literals or interface names). Throws AddressError naming NBOX_TCP_IFADDR.
std::vector<Device> DevicesFrom(const std::string& ifaddr_list);

// The devices of this process: NBOX_TCP_IFADDR (default 127.0.0.1) read once, at the first
// call. Throws AddressError at every call if that setting is bad.
const std::vector<Device>& Devices();

}  // namespace nbox::bridge::tcp
