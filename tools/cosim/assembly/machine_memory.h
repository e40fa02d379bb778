// What this machine lets nbox-cosim take: the memory it may still allocate, and a ceiling
// that turns running out into an error nbox reports (std::bad_alloc, refused with exit
// status 3) rather than the kernel's OOM killer ending the process without a word. The
// ceiling guards the steps whose memory is known only once they have run: the build of the
// workload's programs (docs/DESIGN.md, "Resource limits").
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace nbox::cosim {

// Bytes this process may still allocate: the smallest of MemAvailable, the room left under
// its memory cgroup's limit (v2 or v1), under its address-space rlimit (ulimit -v) and
// under `limit_bytes` counted from the memory it holds now (--memory; 0: none); 0 if none
// can be read.
uint64_t AvailableMemoryBytes(uint64_t limit_bytes = 0);

// While it lives, the process may map at most `room_bytes` beyond what it has mapped now
// (its address-space limit, RLIMIT_AS, lowered to VmSize + room); the previous limit comes
// back when it ends. 0 sets nothing; a lower limit the process already has stays.
class MemoryCap {
 public:
  explicit MemoryCap(uint64_t room_bytes);
  ~MemoryCap();
  MemoryCap(const MemoryCap&) = delete;
  MemoryCap& operator=(const MemoryCap&) = delete;

 private:
  rlimit previous_{};
  bool lowered_ = false;
};

}  // namespace nbox::cosim
