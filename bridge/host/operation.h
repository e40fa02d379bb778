// What the runtime thread of a communicator executes: an Operation is one call, or all the
// calls of a group on one communicator, as Parts that progress together.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bridge/include/nbox_host.h"
#include "bridge/include/nbox_net_ext.h"
#include "bridge/profiler/collective_record.h"
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
  // Its line of the collective trace (collective_recorder.h), launched; unset when no trace is
  // written or the part is not in it.
  std::optional<bridge::profiler::CollectiveRecord> record;
};

// Tells the plugin (nboxNetExt_v2.programWaiting) that a program thread waits on the runtime
// for as long as it lives, so that a virtual rank's clock stands still only then.
class ProgramWait {
 public:
  explicit ProgramWait(const nboxNetExt_v2_t* ext) : ext_(ext) {
    if (ext_ != nullptr) ext_->programWaiting(1);
  }
  ~ProgramWait() {
    if (ext_ != nullptr) ext_->programWaiting(0);
  }
  ProgramWait(const ProgramWait&) = delete;
  ProgramWait& operator=(const ProgramWait&) = delete;

 private:
  const nboxNetExt_v2_t* ext_;
};

class Operation {
 public:
  std::vector<Part> parts;
  // The plugin's extension, when it has a clock to tell about waits (set by the communicator).
  const nboxNetExt_v2_t* clock_ext = nullptr;

  void Finish(nboxResult_t result) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
      result_ = result;
    }
    cv_.notify_all();
  }
  // The program waits for it (nboxWait): a virtual rank's clock may stand still meanwhile.
  nboxResult_t Wait() { return WaitTelling(clock_ext); }
  // A thread waits on the program's behalf while the program goes on (nboxWaitInBackground):
  // the plugin is not told, so the clock keeps running unless the program says it waits.
  nboxResult_t WaitInBackground() { return WaitTelling(nullptr); }
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
  nboxResult_t WaitTelling(const nboxNetExt_v2_t* ext) {
    nboxResult_t result;
    if (Poll(&result)) return result;
    ProgramWait waiting(ext);  // not under mutex_: the plugin takes its own lock
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return finished_; });
    return result_;
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool launched_ = false;  // false while its group is open
  bool finished_ = false;
  nboxResult_t result_ = nboxSuccess;
};

}  // namespace nbox::host
