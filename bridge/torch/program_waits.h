// When a PyTorch program waits for its communication, told to the host runtime so that under
// nbox-cosim's virtual clock a real rank's clock stands still exactly then (nbox_host.h,
// nboxProgramWaiting).
//
// The backend's completion thread waits on every request (nboxWaitInBackground) while the
// program goes on computing and posting: that wait alone must not stop the clock, or a post
// made meanwhile carries a time the simulator has already passed. The program waits
//  - in Work::wait (synchronous calls, an explicit wait, DDP's broadcasts): bracketed there;
//  - at the end of a backward pass that posted operations: DDP, and any gradient hook that
//    overlaps its all-reduces with backward, waits for their futures in the autograd engine's
//    final callbacks, which PyTorch gives no hook into; a final callback queued at the pass's
//    first post runs before theirs (callbacks run in the order queued) and declares the wait,
//    which lasts until the program's next call into the backend.
// A script that waits on a future itself (`work.get_future().wait()`) is not seen waiting: the
// clock runs through that wait as through compute (README.md, "PyTorch ranks").
//
// One per process: the plugin counts waits per process, and a declared wait must end at the
// program's next call on any process group.
#pragma once

#include <mutex>

#include "bridge/include/nbox_host.h"

namespace nbox::torch_backend {

class ProgramWaits {
 public:
  static ProgramWaits& Get();

  // The program thread is in a call of the backend: it does not wait (ends the wait declared
  // at the end of a backward pass). Call before posting anything.
  void Resumed();
  // An operation was posted on `comm`: inside a backward pass, queue the end-of-pass wait.
  void Posted(nboxComm_t comm);
  // `comm` goes away: a wait declared through it ends.
  void Forget(nboxComm_t comm);

  // Declares the program waiting on `comm` for as long as it lives (Work::wait).
  class Waiting {
   public:
    explicit Waiting(nboxComm_t comm);
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    nboxComm_t comm_;
  };

 private:
  void EndOfBackward(nboxComm_t comm);

  std::mutex mutex_;
  nboxComm_t declared_through_ = nullptr;  // the end-of-backward wait, while it lasts
  bool callback_queued_ = false;           // for the backward pass under way
};

}  // namespace nbox::torch_backend
