#include "tools/cosim/assembly/machine_memory.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace nbox::cosim {
namespace {

// The first number of the first line of `path`, or `fallback` if it has none ("max").
uint64_t ReadNumber(const std::string& path, uint64_t fallback) {
  std::ifstream in(path);
  uint64_t value = 0;
  return in >> value ? value : fallback;
}

// "Name: value kB" of /proc/<file>, in bytes; `fallback` if absent.
uint64_t ReadProcKib(const std::string& path, const std::string& name, uint64_t fallback) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string word;
    uint64_t kib = 0;
    if (words >> word >> kib && word == name) return kib * 1024;
  }
  return fallback;
}

// Room left under a limit, or `none` when there is no limit (`limit` >= 2^60: "unlimited").
uint64_t RoomUnder(uint64_t limit, uint64_t used, uint64_t none) {
  if (limit >= (1ull << 60)) return none;
  return limit > used ? limit - used : 1;  // 1, not 0: 0 means "unknown" to callers
}

}  // namespace

uint64_t AvailableMemoryBytes(uint64_t limit_bytes) {
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  uint64_t room = ReadProcKib("/proc/meminfo", "MemAvailable:", kNone);
  // A container's memory cgroup: v2, else v1 (paths as seen from inside the container).
  room = std::min(room, RoomUnder(ReadNumber("/sys/fs/cgroup/memory.max", kNone),
                                  ReadNumber("/sys/fs/cgroup/memory.current", 0), kNone));
  room = std::min(room,
                  RoomUnder(ReadNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes", kNone),
                            ReadNumber("/sys/fs/cgroup/memory/memory.usage_in_bytes", 0), kNone));
  rlimit address_space{};
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    room = std::min(room, RoomUnder(address_space.rlim_cur,
                                    ReadProcKib("/proc/self/status", "VmSize:", 0), kNone));
  }
  if (limit_bytes > 0) {
    room = std::min(room,
                    RoomUnder(limit_bytes, ReadProcKib("/proc/self/status", "VmRSS:", 0), kNone));
  }
  return room == kNone ? 0 : room;
}

MemoryCap::MemoryCap(uint64_t room_bytes) {
  if (room_bytes == 0 || getrlimit(RLIMIT_AS, &previous_) != 0) return;
  const uint64_t mapped = ReadProcKib("/proc/self/status", "VmSize:", 0);
  if (mapped == 0) return;
  const auto ceiling = static_cast<rlim_t>(mapped + room_bytes);
  if (previous_.rlim_cur != RLIM_INFINITY && previous_.rlim_cur <= ceiling) return;
  rlimit lowered = previous_;
  lowered.rlim_cur = ceiling;
  lowered_ = setrlimit(RLIMIT_AS, &lowered) == 0;
}

MemoryCap::~MemoryCap() {
  // Raising a soft limit back to what it was, under the same hard limit, is always allowed.
  if (lowered_) setrlimit(RLIMIT_AS, &previous_);
}

}  // namespace nbox::cosim
