#include "bridge/tcp/tcp_devices.h"

#include <limits.h>
#include <stdlib.h>

#include <fstream>
#include <mutex>

namespace nbox::bridge::tcp {
namespace {

int SpeedOf(const std::string& if_name) {
  if (if_name.empty()) return kDefaultSpeedMbps;
  std::ifstream file("/sys/class/net/" + if_name + "/speed");
  long speed = 0;
  // Virtual interfaces fail the read (EINVAL) or report -1.
  if (!(file >> speed) || speed <= 0 || speed > INT_MAX) return kDefaultSpeedMbps;
  return static_cast<int>(speed);
}

std::string PciPathOf(const std::string& if_name) {
  if (if_name.empty()) return "";
  const std::string link = "/sys/class/net/" + if_name + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  return resolved;
}

}  // namespace

std::vector<Device> DevicesFrom(const std::string& ifaddr_list) {
  std::vector<Device> devices;
  for (LocalAddress& local : ParseLocalAddressList(ifaddr_list, kIfAddrVariable)) {
    Device device;
    device.speed_mbps = SpeedOf(local.if_name);
    device.pci_path = PciPathOf(local.if_name);
    device.local = std::move(local);
    devices.push_back(std::move(device));
  }
  return devices;
}

const std::vector<Device>& Devices() {
  static std::once_flag once;
  static std::vector<Device>* devices = nullptr;
  static std::string* error = nullptr;
  std::call_once(once, [] {
    try {
      devices = new std::vector<Device>(DevicesFrom(EnvOr(kIfAddrVariable, kDefaultIfAddr)));
    } catch (const AddressError& e) {
      error = new std::string(e.what());
    }
  });
  if (error != nullptr) throw AddressError(*error);
  return *devices;
}

}  // namespace nbox::bridge::tcp
