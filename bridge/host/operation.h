// What the runtime thread of a communicator executes: an Operation is one call, or all the
// calls of a group on one communicator, as Parts that progress together.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bridge/include/nbox_host.h"
#include "collectives/schedule.h"

namespace nbox::host {

struct Copy {
  uint8_t* dst = nullptr;
  const uint8_t* src = nullptr;
  uint64_t bytes = 0;
};

// A collective, or one side of a point-to-point transfer: a schedule of steps over `work`,
// with the copies that bring the call's buffers into the schedule's in-place convention
// before the first step and out of it after the last.
struct Part {
  std::shared_ptr<const coll::RankSchedule> schedule;
  uint8_t* work = nullptr;  // the buffer the schedule's offsets index
  nboxDataType_t type = nboxFloat32;
  nboxRedOp_t op = nboxSum;
  bool point_to_point = false;  // uses the communicator's point-to-point lane, not channels
  std::vector<Copy> before;
  std::vector<Copy> after;
  std::shared_ptr<uint8_t[]> scratch;  // owned work buffer when the call has none to give
  std::string what;                    // "AllReduce of 1000 float32", for messages
  // Messages from emulated ranks (payload = self, NBOX_NET_COMPLETION_SYNTHETIC): the spec of a
  // collective part, and per step id how many ranks' inputs its message carries
  // (coll::MessageContributions); nullptr when no peer is emulated or for point to point (1).
  coll::CollectiveSpec spec;
  std::shared_ptr<const std::vector<uint32_t>> contributions;
};

class Operation {
 public:
  std::vector<Part> parts;

  void Finish(nboxResult_t result) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
      result_ = result;
    }
    cv_.notify_all();
  }
  nboxResult_t Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return finished_; });
    return result_;
  }
  // True once finished, with the result in *result.
  bool Poll(nboxResult_t* result) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) *result = result_;
    return finished_;
  }
  void MarkLaunched() {
    std::lock_guard<std::mutex> lock(mutex_);
    launched_ = true;
  }
  bool launched() {
    std::lock_guard<std::mutex> lock(mutex_);
    return launched_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool launched_ = false;  // false while its group is open
  bool finished_ = false;
  nboxResult_t result_ = nboxSuccess;
};

}  // namespace nbox::host
