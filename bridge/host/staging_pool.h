// Reusable receive buffers for messages that cannot land in place (reductions, and messages
// that arrive before their step may write its region). Used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

namespace nbox::host {

class StagingPool {
 public:
  // A buffer of at least `bytes` bytes (uninitialised); give it back with Put.
  uint8_t* Get(uint64_t bytes) {
    auto it = idle_.lower_bound(bytes);
    if (it != idle_.end()) {
      uint8_t* buffer = it->second.release();
      capacity_[buffer] = it->first;
      idle_.erase(it);
      return buffer;
    }
    uint8_t* buffer = new uint8_t[bytes];
    capacity_[buffer] = bytes;
    return buffer;
  }
  void Put(uint8_t* buffer) {
    auto it = capacity_.find(buffer);
    idle_.emplace(it->second, std::unique_ptr<uint8_t[]>(buffer));
    capacity_.erase(it);
  }
  uint64_t Capacity(uint8_t* buffer) const { return capacity_.at(buffer); }
  ~StagingPool() {
    for (auto& [buffer, bytes] : capacity_) delete[] buffer;
  }

 private:
  std::multimap<uint64_t, std::unique_ptr<uint8_t[]>> idle_;  // by capacity
  std::map<uint8_t*, uint64_t> capacity_;                     // buffers handed out
};

}  // namespace nbox::host
